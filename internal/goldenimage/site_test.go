package goldenimage_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestCloneBuildVMSite: the build VM (and so the template) is placed by
// Storage DRS in the datastore cluster and tagged right after its clone.
func TestCloneBuildVMSite(t *testing.T) {
	bundle, err := pki.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bundle.CA.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vcsim.Start(context.Background(), vcsim.Options{Certificate: cert, RootCAs: bundle.CA.Pool(), User: "administrator@vsphere.local", Password: "s3cret-Passw0rd"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := vsphere.NewClient(t.Context(), vsphere.Config{Server: srv.Server, User: srv.User, Password: srv.Password, CAFile: bundle.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Logout(context.Background()) })
	vm, err := goldenimage.NewVSphere(c).CloneBuildVM(t.Context(), goldenimage.CloneRequest{
		Source: srv.Templates["2022"], Name: "img-site", Folder: srv.GoldenFolder, ResourcePoolID: srv.ResourcePoolID,
		DatastoreClusterID: srv.Site.DatastoreClusterID, StoragePolicyID: vcsim.StoragePolicyID,
		Metadata: vsphere.Metadata{Tags: srv.Site.TagIDs[:1], CustomAttributes: map[string]string{srv.Site.CustomAttributeKey: "image"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.ReadVM(t.Context(), vsphere.VMRef(vm.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Disks[0].FileName, "LocalDS_1") {
		t.Errorf("the build VM's disk is %s, want it on the datastore cluster's LocalDS_1", info.Disks[0].FileName)
	}
	if tags, err := c.AttachedTags(t.Context(), vsphere.VMRef(vm.ID)); err != nil || !slices.Equal(tags, srv.Site.TagIDs[:1]) {
		t.Errorf("tags %v, %v; want %v", tags, err, srv.Site.TagIDs[:1])
	}
}
