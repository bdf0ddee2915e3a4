package vsphere

import (
	"strings"
	"testing"
)

// TestKindsAcceptTheFormsHashicorpVSphereHandsOut checks each kind against
// the values hashicorp/vsphere's data sources and resources hand out, and
// that what no finder resolves is refused with a message that lists the
// forms (and says what a value of another kind is).
func TestKindsAcceptTheFormsHashicorpVSphereHandsOut(t *testing.T) {
	for _, tc := range []struct {
		kind   Kind
		accept []string
		refuse map[string]string // value: a part of the message
	}{
		{ResourcePoolKind, []string{"resgroup-12", "resgroup-v34"}, map[string]string{
			"domain-c7":                    "data.vsphere_compute_cluster.<name>.resource_pool_id",
			"host-12":                      "data.vsphere_host.<name>.resource_pool_id",
			"/DC0/host/DC0_C0/Resources":   "resgroup-12",
			"":                             "Accepted: a managed object id",
			"42165c7e-0b5b-4a8e-9c41-4c3b": "names no resource pool",
		}},
		{DatastoreKind, []string{"datastore-12"}, map[string]string{
			"group-p5":  "set datastore_cluster_id to it",
			"LocalDS_0": "data.vsphere_datastore.<name>.id",
		}},
		{DatastoreClusterKind, []string{"group-p12"}, map[string]string{"datastore-3": "names no datastore cluster"}},
		{NetworkKind, []string{"network-7", "dvportgroup-12", "network-o12"}, map[string]string{
			"dvs-9":      "give one of its port groups",
			"VM Network": "data.vsphere_network.<name>.id",
		}},
		{HostKind, []string{"host-12"}, map[string]string{"domain-s9": "standalone host"}},
		{FolderKind, []string{"/DC0/vm/windows", "windows", "k8s/windows", "k8s/windows/", "group-v12"}, map[string]string{
			"group-h4":    "holds no VMs",
			"resgroup-1":  "names no VM folder",
			"../windows":  "relative to the VM folder",
			"k8s//x":      "vsphere_folder.<name>.path",
			"":            "data.vsphere_folder.<name>.id",
			"datastore-1": "Accepted: an absolute inventory path",
		}},
		{VMKind, []string{"/DC0/vm/templates/win2022-base", "vm-12", "42165c7e-0b5b-4a8e-9c41-4c3b0e6f0a11"}, map[string]string{
			"win2022-base":           "data.vsphere_virtual_machine.<name>.id",
			"templates/win2022-base": "data.vsphere_virtual_machine.<name>.instance_uuid",
			"domain-c7":              "a cluster's id",
		}},
	} {
		for _, v := range tc.accept {
			if err := tc.kind.Check(v); err != nil {
				t.Errorf("%s %q: %v", tc.kind.Noun, v, err)
			}
		}
		for v, want := range tc.refuse {
			err := tc.kind.Check(v)
			if err == nil {
				t.Errorf("%s %q accepted", tc.kind.Noun, v)
				continue
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s %q: %v\nwant it to say %q", tc.kind.Noun, v, err, want)
			}
		}
	}
}
