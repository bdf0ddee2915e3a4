package winnode

import (
	"slices"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestAdapterCloneSite: a node's datacenter settings reach its VM through
// the adapter (Storage DRS's datastore, the extra disk and NIC, the tags
// and custom attribute), and a storage policy vCenter does not know stops
// the create before any VM exists, naming storage_policy_id.
func TestAdapterCloneSite(t *testing.T) {
	a, srv := vcsimAdapter(t)
	ctx := t.Context()
	req := adapterRequest(srv, srv.Templates["2022"], "site-1", 1)
	req.DatastoreID = ""
	req.Site = SiteVM{
		DatastoreClusterID: srv.Site.DatastoreClusterID, StoragePolicyID: vcsim.StoragePolicyID,
		ExtraDiskSizesGB: []int64{10}, ExtraNetworkIDs: []string{srv.NetworkID},
		Metadata: vsphere.Metadata{Tags: srv.Site.TagIDs, CustomAttributes: map[string]string{srv.Site.CustomAttributeKey: "worker"}},
	}
	id, err := a.CloneNode(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	info, err := a.ReadVM(ctx, id.VMID)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Disks) != 2 || info.Disks[1].SizeGB() != 10 || len(info.NetworkIDs) == 0 {
		t.Errorf("disks %+v, networks %v: want the template's disk and one of 10 GiB", info.Disks, info.NetworkIDs)
	}
	if !strings.Contains(info.Disks[0].FileName, "LocalDS_1") {
		t.Errorf("the VM's disk is %s, want it on the datastore cluster's LocalDS_1", info.Disks[0].FileName)
	}
	tags, err := a.c.AttachedTags(ctx, vsphere.VMRef(id.VMID))
	if err != nil || !slices.Equal(tags, slices.Sorted(slices.Values(srv.Site.TagIDs))) {
		t.Errorf("tags %v, %v; want %v", tags, err, srv.Site.TagIDs)
	}

	bad := adapterRequest(srv, srv.Templates["2022"], "site-2", 2)
	bad.Site.StoragePolicyID = "00000000-0000-0000-0000-000000000000"
	if id, err := a.CloneNode(ctx, bad); err == nil || id.VMID != "" || !strings.Contains(err.Error(), "storage_policy_id") {
		t.Errorf("an unknown storage policy: %+v, %v; want no VM and an error naming storage_policy_id", id, err)
	}
}
