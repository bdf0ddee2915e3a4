package vsphere

import (
	"fmt"
	"regexp"
	"strings"
)

// The forms in which a configuration names a vSphere object: every form
// hashicorp/vsphere hands out for it, as it hands it out (v2.16.1, read in
// its source), so its data sources and resources feed this provider's
// attributes unchanged:
//
//   - vsphere_resource_pool.id, vsphere_compute_cluster.resource_pool_id,
//     vsphere_host.resource_pool_id, vsphere_vapp_container.id: the pool's
//     managed object id ("resgroup-12", a vApp's "resgroup-v12");
//   - vsphere_datastore.id: "datastore-12";
//   - vsphere_network.id: "network-12" (a standard port group) or
//     "dvportgroup-12" (a distributed one);
//   - vsphere_host.id: "host-12";
//   - vsphere_folder.id: "group-v12"; the vsphere_folder data source takes an
//     absolute path ("/dc1/vm/k8s"), the vsphere_folder resource's path and
//     vsphere_virtual_machine's folder are relative to the datacenter's VM
//     folder ("k8s"), and the vsphere_virtual_machine data source's folder
//     is absolute ("/dc1/vm/k8s");
//   - vsphere_virtual_machine (data source and resource): id and uuid are
//     the BIOS UUID (config.uuid), instance_uuid the instance UUID
//     (config.instanceUuid), moid the managed object id ("vm-12").
//
// Each attribute checks its value's form at plan time (Kind.Check) and the
// finders resolve every form (FindVM, FindFolder).

// Form is one way of naming an object.
type Form struct {
	// Name says what the form is, Example shows one.
	Name, Example string
	// From lists the hashicorp/vsphere attributes that hand it out.
	From  []string
	match func(string) bool
}

// Kind is a kind of object an attribute names, and the forms it accepts.
type Kind struct {
	Noun  string
	Forms []Form
}

var (
	uuidPattern    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	anyMOIDPattern = regexp.MustCompile(`^(vm|resgroup|datastore|network|dvportgroup|host|group|domain|datacenter|dvs|vapp)-[a-z]?[0-9]+$`)
	poolIDPattern  = regexp.MustCompile(`^resgroup-v?[0-9]+$`)
	dsIDPattern    = regexp.MustCompile(`^datastore-[0-9]+$`)
	podIDPattern   = regexp.MustCompile(`^group-p[0-9]+$`)
	netIDPattern   = regexp.MustCompile(`^(network-[a-z]?[0-9]+|dvportgroup-[0-9]+)$`)
	hostIDPattern  = regexp.MustCompile(`^host-[0-9]+$`)
	vmIDPattern    = regexp.MustCompile(`^vm-[0-9]+$`)
	// vCenter's VM folders are "group-v12"; folders vcsim creates are
	// "group-12", and the sandbox hands those out.
	folderIDPattern = regexp.MustCompile(`^group-v?[0-9]+$`)
)

func isAbsolutePath(s string) bool { return strings.HasPrefix(s, "/") && len(s) > 1 }

// isRelativePath is a folder path below a datacenter's VM folder: not
// absolute, no empty or dot segments, and no managed object id.
func isRelativePath(s string) bool {
	if s == "" || strings.HasPrefix(s, "/") || anyMOIDPattern.MatchString(s) || uuidPattern.MatchString(s) {
		return false
	}
	for seg := range strings.SplitSeq(strings.TrimSuffix(s, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Kinds of objects, with their forms.
var (
	ResourcePoolKind = Kind{Noun: "resource pool", Forms: []Form{{
		Name: "managed object id", Example: "resgroup-12",
		From: []string{"data.vsphere_resource_pool.<name>.id", "data.vsphere_compute_cluster.<name>.resource_pool_id",
			"data.vsphere_host.<name>.resource_pool_id", "vsphere_vapp_container.<name>.id"},
		match: poolIDPattern.MatchString,
	}}}
	DatastoreKind = Kind{Noun: "datastore", Forms: []Form{{
		Name: "managed object id", Example: "datastore-12", From: []string{"data.vsphere_datastore.<name>.id"},
		match: dsIDPattern.MatchString,
	}}}
	DatastoreClusterKind = Kind{Noun: "datastore cluster", Forms: []Form{{
		Name: "managed object id", Example: "group-p12",
		From: []string{"data.vsphere_datastore_cluster.<name>.id", "vsphere_datastore_cluster.<name>.id"}, match: podIDPattern.MatchString,
	}}}
	NetworkKind = Kind{Noun: "network", Forms: []Form{{
		Name: "managed object id of a standard or distributed port group", Example: "network-12, dvportgroup-12",
		From: []string{"data.vsphere_network.<name>.id"}, match: netIDPattern.MatchString,
	}}}
	HostKind = Kind{Noun: "ESXi host", Forms: []Form{{
		Name: "managed object id", Example: "host-12", From: []string{"data.vsphere_host.<name>.id"},
		match: hostIDPattern.MatchString,
	}}}
	FolderKind = Kind{Noun: "VM folder", Forms: []Form{
		{Name: "absolute inventory path", Example: "/dc1/vm/k8s-windows",
			From: []string{"data.vsphere_virtual_machine.<name>.folder", "data.vsphere_folder.<name>.path"}, match: isAbsolutePath},
		{Name: "path relative to the VM folder of the resource pool's datacenter", Example: "k8s-windows",
			From: []string{"vsphere_folder.<name>.path (type \"vm\")", "vsphere_virtual_machine.<name>.folder"}, match: isRelativePath},
		{Name: "managed object id", Example: "group-v12",
			From: []string{"data.vsphere_folder.<name>.id", "vsphere_folder.<name>.id"}, match: folderIDPattern.MatchString},
	}}
	VMKind = Kind{Noun: "virtual machine or template", Forms: []Form{
		{Name: "absolute inventory path", Example: "/dc1/vm/templates/win2022-base", match: isAbsolutePath},
		{Name: "managed object id", Example: "vm-12",
			From:  []string{"data.vsphere_virtual_machine.<name>.moid", "vsphere_virtual_machine.<name>.moid", "windows_golden_image.<name>.template_id"},
			match: vmIDPattern.MatchString},
		{Name: "BIOS UUID", Example: "42165c7e-0b5b-4a8e-9c41-4c3b0e6f0a11",
			From:  []string{"data.vsphere_virtual_machine.<name>.id", "data.vsphere_virtual_machine.<name>.uuid", "vsphere_virtual_machine.<name>.id"},
			match: uuidPattern.MatchString},
		{Name: "instance UUID", Example: "50165c7e-0b5b-4a8e-9c41-4c3b0e6f0a11",
			From: []string{"data.vsphere_virtual_machine.<name>.instance_uuid"}, match: uuidPattern.MatchString},
	}}
)

// wrongKinds name the managed object ids users give in the wrong place, and
// where the right one comes from.
var wrongKinds = []struct {
	pattern *regexp.Regexp
	what    string
	hint    map[string]string // by Kind.Noun: the fix
}{
	{regexp.MustCompile(`^domain-c[0-9]+$`), "a cluster's id (vsphere_compute_cluster.id)", map[string]string{
		"resource pool": "use the cluster's root pool, data.vsphere_compute_cluster.<name>.resource_pool_id"}},
	{regexp.MustCompile(`^domain-s[0-9]+$`), "a standalone host's compute resource id", map[string]string{
		"resource pool": "use the host's root pool, data.vsphere_host.<name>.resource_pool_id"}},
	{regexp.MustCompile(`^host-[0-9]+$`), "an ESXi host's id (vsphere_host.id)", map[string]string{
		"resource pool": "use the host's root pool, data.vsphere_host.<name>.resource_pool_id, or set host_id"}},
	{regexp.MustCompile(`^group-p[0-9]+$`), "a datastore cluster's id (vsphere_datastore_cluster.id)", map[string]string{
		"datastore": "set datastore_cluster_id to it for Storage DRS placement, or give one of its datastores (data.vsphere_datastore.<name>.id)"}},
	{regexp.MustCompile(`^group-[dhns][0-9]+$`), "the id of a folder that holds no VMs (a datacenter, host, network or datastore folder)", nil},
	{regexp.MustCompile(`^datacenter-[0-9]+$`), "a datacenter's id (vsphere_datacenter.id)", nil},
	{regexp.MustCompile(`^dvs-[0-9]+$`), "a distributed switch's id", map[string]string{
		"network": "give one of its port groups: data.vsphere_network.<name>.id with distributed_virtual_switch_uuid"}},
}

// Check returns nil when v has one of the kind's forms, or an error that
// lists them (and says what v is when it is another kind's id).
func (k Kind) Check(v string) error {
	for _, f := range k.Forms {
		if f.match(v) {
			return nil
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%q names no %s", v, k.Noun)
	for _, w := range wrongKinds {
		if w.pattern.MatchString(v) {
			fmt.Fprintf(&b, ": it is %s", w.what)
			if h := w.hint[k.Noun]; h != "" {
				fmt.Fprintf(&b, "; %s", h)
			}
			break
		}
	}
	b.WriteString(". Accepted: " + k.Accepted())
	return fmt.Errorf("%s", b.String())
}

// Accepted lists the forms, their examples and where they come from.
func (k Kind) Accepted() string {
	parts := make([]string, 0, len(k.Forms))
	for _, f := range k.Forms {
		p := fmt.Sprintf("%s %s (%s", article(f.Name), f.Name, f.Example)
		if len(f.From) > 0 {
			p += "; " + strings.Join(f.From, ", ")
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, "; or ")
}

func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}

// Markdown lists the forms for an attribute's documentation.
func (k Kind) Markdown() string {
	parts := make([]string, 0, len(k.Forms))
	for _, f := range k.Forms {
		ex := strings.Split(f.Example, ", ")
		for i := range ex {
			ex[i] = "`" + ex[i] + "`"
		}
		p := article(f.Name) + " " + f.Name + " (" + strings.Join(ex, ", ")
		if len(f.From) > 0 {
			from := make([]string, len(f.From))
			for i, s := range f.From {
				from[i] = "`" + s + "`"
			}
			p += ": " + strings.Join(from, ", ")
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, "; or ")
}
