// Package gmsa manages the Kubernetes side of Group Managed Service Accounts
// for Windows pods, as kubernetes-sigs/windows-gmsa defines it: the
// cluster-scoped GMSACredentialSpec object (windows.k8s.io/v1, whose
// `credspec` field holds the JSON that PowerShell's New-CredentialSpec
// writes), the ClusterRole granting the verb `use` on that one object and
// the RoleBindings that give it to named ServiceAccounts, and the check that
// the windows-gmsa admission webhook and its CRD are installed (without the
// webhook, a pod's gmsaCredentialSpecName is never resolved and no
// authorization is checked).
//
// The Windows side (the KDS root key, the gMSA account, the group of hosts
// allowed to retrieve its password, the nodes' domain membership) is Active
// Directory's, done outside Kubernetes (the guide "gMSA for Windows pods").
package gmsa

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
)

// CredentialSpec is the credential spec document as New-CredentialSpec
// (CredentialSpec module, Microsoft Learn "Create a credential spec") writes
// it and as the GMSACredentialSpec CRD's `credspec` schema lists it
// (kubernetes-sigs/windows-gmsa admission-webhook/deploy/gmsa-crd.yml). The
// JSON names are the document's own; the container runtime hands it to HCS
// unchanged (OCI runtime spec config-windows.md "Credential Spec").
type CredentialSpec struct {
	CmsPlugins            []string              `json:"CmsPlugins"`
	DomainJoinConfig      DomainJoinConfig      `json:"DomainJoinConfig"`
	ActiveDirectoryConfig ActiveDirectoryConfig `json:"ActiveDirectoryConfig"`
}

// DomainJoinConfig identifies the domain and the gMSA: the domain's SID,
// GUID and names, and the gMSA's account name (MachineAccountName, without
// the trailing $).
type DomainJoinConfig struct {
	Sid                string `json:"Sid"`
	MachineAccountName string `json:"MachineAccountName"`
	Guid               string `json:"Guid"` //nolint:revive // the document's own name
	DnsTreeName        string `json:"DnsTreeName"`
	DnsName            string `json:"DnsName"`
	NetBiosName        string `json:"NetBiosName"`
}

// ActiveDirectoryConfig lists the gMSAs the container may use and, for
// hosts that are not domain-joined, the Container Credential Guard plugin
// that retrieves the gMSA's credentials (HostAccountConfig).
type ActiveDirectoryConfig struct {
	GroupManagedServiceAccounts []ServiceAccountScope `json:"GroupManagedServiceAccounts"`
	HostAccountConfig           *HostAccountConfig    `json:"HostAccountConfig,omitempty"`
}

// ServiceAccountScope is one entry of GroupManagedServiceAccounts: the
// gMSA's name and the domain it is scoped to. New-CredentialSpec writes two
// entries per gMSA, scoped to the DNS name and to the NetBIOS name.
type ServiceAccountScope struct {
	Name  string `json:"Name"`
	Scope string `json:"Scope"`
}

// HostAccountConfig is the Container Credential Guard plugin of a host that
// is not domain-joined (New-CredentialSpec -HostAccountConfig, Microsoft
// Learn "Create gMSAs for Windows containers", non-domain-joined hosts).
type HostAccountConfig struct {
	PortableCcgVersion string `json:"PortableCcgVersion"`
	PluginGUID         string `json:"PluginGUID"`
	PluginInput        string `json:"PluginInput"`
}

// ActiveDirectoryPlugin is the one CmsPlugins entry New-CredentialSpec
// writes.
const ActiveDirectoryPlugin = "ActiveDirectory"

// domainSID is a domain's SID as New-CredentialSpec writes it: S-1-5-21
// and the domain's three sub-authorities (MS-DTYP 2.4.2.4, domain
// identifiers); a gMSA's or a user's SID would carry a fourth, the RID.
var domainSID = regexp.MustCompile(`^S-1-5-21-\d{1,10}-\d{1,10}-\d{1,10}$`)

// samName: a sAMAccountName of a gMSA is at most 15 characters before the
// $ New-ADServiceAccount appends (the computer-account limit, Microsoft
// Learn "Naming conventions in Active Directory"), without the characters
// account names refuse.
var samName = regexp.MustCompile(`^[^"/\\\[\]:;|=,+*?<>@ ]{1,15}$`)

// FieldError is a value of the credential spec that Windows would refuse,
// naming the field by its place in the document.
type FieldError struct {
	Field, Value, Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %q %s", e.Field, e.Value, e.Reason)
}

// Validate checks spec for what the document's readers refuse or cannot
// use: a SID that is no domain SID, a GUID that is not one, an account name
// Active Directory would not hold, no gMSA listed, a gMSA listed that is
// not the one DomainJoinConfig names.
func (spec CredentialSpec) Validate() error {
	var errs []error
	add := func(field, value, reason string) { errs = append(errs, &FieldError{field, value, reason}) }
	d := spec.DomainJoinConfig
	if !domainSID.MatchString(d.Sid) {
		add("DomainJoinConfig.Sid", d.Sid, "is not a domain SID (S-1-5-21-<three numbers>, as (Get-ADDomain).DomainSID prints it)")
	}
	if _, err := uuid.Parse(d.Guid); err != nil || strings.HasPrefix(d.Guid, "{") {
		add("DomainJoinConfig.Guid", d.Guid, "is not a GUID as (Get-ADDomain).ObjectGUID prints it (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
	}
	name := strings.TrimSuffix(d.MachineAccountName, "$")
	if !samName.MatchString(name) {
		add("DomainJoinConfig.MachineAccountName", d.MachineAccountName, "is not a gMSA account name (1 to 15 characters, none of \"/\\[]:;|=,+*?<>@ or space)")
	}
	for field, v := range map[string]string{"DomainJoinConfig.DnsName": d.DnsName, "DomainJoinConfig.DnsTreeName": d.DnsTreeName} {
		if !isDNSName(v) {
			add(field, v, "is not a DNS domain name (contoso.com)")
		}
	}
	if d.NetBiosName == "" || len(d.NetBiosName) > 15 || strings.ContainsAny(d.NetBiosName, `\/:*?"<>| .`) {
		add("DomainJoinConfig.NetBiosName", d.NetBiosName, "is not a NetBIOS domain name (1 to 15 characters, no dot)")
	}
	if len(spec.CmsPlugins) == 0 {
		add("CmsPlugins", "", "is empty; New-CredentialSpec writes [\"ActiveDirectory\"]")
	}
	accounts := spec.ActiveDirectoryConfig.GroupManagedServiceAccounts
	if len(accounts) == 0 {
		add("ActiveDirectoryConfig.GroupManagedServiceAccounts", "", "is empty: the container would have no identity")
	}
	for i, a := range accounts {
		field := fmt.Sprintf("ActiveDirectoryConfig.GroupManagedServiceAccounts[%d]", i)
		if !strings.EqualFold(strings.TrimSuffix(a.Name, "$"), name) {
			add(field+".Name", a.Name, fmt.Sprintf("is not the gMSA DomainJoinConfig.MachineAccountName names (%q): a container runs as one gMSA", d.MachineAccountName))
		}
		if !strings.EqualFold(a.Scope, d.DnsName) && !strings.EqualFold(a.Scope, d.NetBiosName) {
			add(field+".Scope", a.Scope, fmt.Sprintf("is neither the domain's DNS name (%q) nor its NetBIOS name (%q)", d.DnsName, d.NetBiosName))
		}
	}
	if h := spec.ActiveDirectoryConfig.HostAccountConfig; h != nil {
		if h.PortableCcgVersion != "1" {
			add("ActiveDirectoryConfig.HostAccountConfig.PortableCcgVersion", h.PortableCcgVersion, "is not \"1\", the only version of Container Credential Guard")
		}
		if _, err := uuid.Parse(strings.Trim(h.PluginGUID, "{}")); err != nil {
			add("ActiveDirectoryConfig.HostAccountConfig.PluginGUID", h.PluginGUID, "is not a GUID (the plugin's COM class, {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx})")
		}
	}
	return errors.Join(errs...)
}

func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

// ParseCredentialSpec reads a credential spec document (New-CredentialSpec's
// file, or a GMSACredentialSpec's credspec field), refusing fields the
// document does not have, so a typo is not silently dropped.
func ParseCredentialSpec(doc []byte) (CredentialSpec, error) {
	var spec CredentialSpec
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return CredentialSpec{}, fmt.Errorf("reading the credential spec: %w", err)
	}
	return spec, nil
}
