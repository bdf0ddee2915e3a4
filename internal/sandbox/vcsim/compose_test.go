package vcsim

import (
	"net/url"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/pbm"
	pbmtypes "github.com/vmware/govmomi/pbm/types"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/session/cache"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
)

// TestServesHashicorpVSphereStartup makes the calls hashicorp/vsphere
// (v2.16.1, vsphere/config.go Config.Client) makes every time it starts
// against a vCenter, with the same govmomi helpers, trusting only the
// sandbox CA (the provider trusts the system roots: SSL_CERT_FILE points
// them at the sandbox CA, see the compose guide):
//   - a vim25 session at https://<server>/sdk (newClientWithKeepAlive);
//   - a vAPI REST session through session/cache (SavedRestSessionOrNew),
//     because the endpoint is a vCenter of 6.5 or later (tags);
//   - a PBM client, pbm.NewClient: PbmRetrieveServiceContent on /pbm (the
//     call that failed with `POST "/pbm": 404 Not Found`), and the profile
//     query its vsphere_storage_policy data source makes;
//   - the tags the vsphere_virtual_machine data source reads for the VM it
//     returns (readTagsForResource: ListAttachedTags).
func TestServesHashicorpVSphereStartup(t *testing.T) {
	s, ca := startServer(t)
	ctx := t.Context()
	userinfo := url.UserPassword(s.User, s.Password)
	trustSandbox := func(sc *soap.Client) error {
		sc.DefaultTransport().TLSClientConfig.RootCAs = ca.Pool()
		return nil
	}

	u := &url.URL{Scheme: "https", Host: s.Server, Path: "/sdk", User: userinfo}
	sc := soap.NewClient(u, false)
	if err := trustSandbox(sc); err != nil {
		t.Fatal(err)
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	gc := &govmomi.Client{Client: vc, SessionManager: session.NewManager(vc)}
	if err := gc.Login(ctx, userinfo); err != nil {
		t.Fatalf("vim25 login: %v", err)
	}
	// viapi.ValidateVirtualCenter and the tags minimum version (6.5.0).
	if about := vc.ServiceContent.About; about.ApiType != "VirtualCenter" || about.Version < "6.5" {
		t.Fatalf("endpoint %s %s: hashicorp/vsphere would skip its vCenter clients", about.ApiType, about.Version)
	}

	restSession := &cache.Session{URL: &url.URL{Scheme: "https", Host: s.Server, User: userinfo}, Passthrough: true}
	rc := new(rest.Client)
	if err := restSession.Login(ctx, rc, trustSandbox); err != nil {
		t.Fatalf("REST session (session/cache, as hashicorp/vsphere opens it): %v", err)
	}

	pc, err := pbm.NewClient(ctx, gc.Client)
	if err != nil {
		t.Fatalf("pbm.NewClient: %v", err)
	}
	profiles, err := pc.QueryProfile(ctx, pbmtypes.PbmProfileResourceType{ResourceType: string(pbmtypes.PbmProfileResourceTypeEnumSTORAGE)}, "")
	if err != nil || len(profiles) == 0 {
		t.Errorf("storage policies: %d, %v; want the simulator's default policies", len(profiles), err)
	}

	vm, err := find.NewFinder(vc).VirtualMachine(ctx, s.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tags.NewManager(rc).ListAttachedTags(ctx, vm); err != nil {
		t.Errorf("tags of %s: %v", s.Templates["2022"], err)
	}
}
