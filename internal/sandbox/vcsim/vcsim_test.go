package vcsim

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

func startServer(t *testing.T) (*Server, *pki.CA) {
	t.Helper()
	ca, err := pki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(t.Context(), Options{
		Certificate: cert, RootCAs: ca.Pool(),
		User: "administrator@vsphere.local", Password: "S3cret-pw!x", Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, ca
}

// connect logs in as a client configured the way the provider is: the CA
// file's pool as roots, never insecure.
func connect(ctx context.Context, t *testing.T, s *Server, ca *pki.CA, user *url.Userinfo) (*vim25.Client, error) {
	t.Helper()
	sc := soap.NewClient(s.URL, false)
	sc.DefaultTransport().TLSClientConfig.RootCAs = ca.Pool()
	c, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, err
	}
	return c, session.NewManager(c).Login(ctx, user)
}

func TestLoginVerifiesCertificateAndCredentials(t *testing.T) {
	s, ca := startServer(t)
	ctx := t.Context()
	if !strings.HasPrefix(s.Server, "127.0.0.1:") || s.URL.Scheme != "https" {
		t.Fatalf("server %s (URL %s) is not https on 127.0.0.1", s.Server, s.URL)
	}

	if _, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password)); err != nil {
		t.Fatalf("login with the right credentials and CA: %v", err)
	}

	_, err := connect(ctx, t, s, ca, url.UserPassword(s.User, "wrong"))
	if err == nil {
		t.Fatal("login with a wrong password succeeded")
	}
	if !isInvalidLogin(err) {
		t.Errorf("wrong password: got %v, want an InvalidLogin fault", err)
	}
	if _, err := connect(ctx, t, s, ca, url.UserPassword("root", s.Password)); err == nil {
		t.Fatal("login with a wrong user succeeded")
	}

	other, _ := pki.NewCA("other")
	if _, err := connect(ctx, t, s, other, url.UserPassword(s.User, s.Password)); err == nil {
		t.Fatal("connection trusting an unrelated CA succeeded")
	}
}

func isInvalidLogin(err error) bool {
	if !soap.IsSoapFault(err) {
		return false
	}
	_, ok := soap.ToSoapFault(err).VimFault().(types.InvalidLogin)
	return ok
}

func TestInventory(t *testing.T) {
	s, ca := startServer(t)
	ctx := t.Context()
	c, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}
	finder := find.NewFinder(c, false)

	for _, want := range Templates {
		p := s.Templates[want.Version]
		vm, err := finder.VirtualMachine(ctx, p)
		if err != nil {
			t.Fatalf("template %s: %v", want.Version, err)
		}
		var got mo.VirtualMachine
		if err := vm.Properties(ctx, vm.Reference(), []string{"config"}, &got); err != nil {
			t.Fatal(err)
		}
		cfg := got.Config
		if !cfg.Template {
			t.Errorf("%s is not a template", p)
		}
		if cfg.GuestId != want.GuestID {
			t.Errorf("%s guestId = %s, want %s", p, cfg.GuestId, want.GuestID)
		}
		if !strings.Contains(cfg.Annotation, want.Build) || !strings.Contains(cfg.Annotation, want.Product) {
			t.Errorf("%s annotation = %q, want the product and build %s", p, cfg.Annotation, want.Build)
		}
		if cfg.Hardware.NumCPU != templateCPUs || cfg.Hardware.MemoryMB != templateMemoryMB || cfg.Firmware != "efi" {
			t.Errorf("%s hardware = %d CPU, %d MB, firmware %s", p, cfg.Hardware.NumCPU, cfg.Hardware.MemoryMB, cfg.Firmware)
		}
		var build string
		for _, o := range cfg.ExtraConfig {
			if ov := o.GetOptionValue(); ov.Key == BuildKey {
				build, _ = ov.Value.(string)
			}
		}
		if build != want.Build {
			t.Errorf("%s %s = %q, want %s", p, BuildKey, build, want.Build)
		}
		var disks, nics int
		for _, d := range cfg.Hardware.Device {
			switch d := d.(type) {
			case *types.VirtualDisk:
				disks++
				if d.CapacityInKB != templateDiskGiB*1024*1024 {
					t.Errorf("%s disk = %d KB, want %d GiB", p, d.CapacityInKB, templateDiskGiB)
				}
			case types.BaseVirtualEthernetCard:
				nics++
			}
		}
		if disks != 1 || nics != 1 {
			t.Errorf("%s has %d disks and %d NICs, want 1 and 1", p, disks, nics)
		}
	}

	if _, err := finder.Folder(ctx, s.Folder); err != nil {
		t.Errorf("VM folder %s: %v", s.Folder, err)
	}

	ids := map[string]string{"ResourcePool": s.ResourcePoolID, "Datastore": s.DatastoreID, "Network": s.NetworkID}
	pc := property.DefaultCollector(c)
	for kind, id := range ids {
		var obj mo.ManagedEntity
		ref := types.ManagedObjectReference{Type: kind, Value: id}
		if err := pc.RetrieveOne(ctx, ref, []string{"name"}, &obj); err != nil {
			t.Errorf("%s %q does not resolve: %v", kind, id, err)
		}
	}

	// No stock simulator VMs: the only VMs are the templates.
	vms, err := finder.VirtualMachineList(ctx, "/DC0/vm/...")
	if err != nil {
		t.Fatal(err)
	}
	if len(vms) != len(Templates) {
		t.Errorf("inventory has %d VMs, want only the %d templates", len(vms), len(Templates))
	}
}

// TestRESTSession checks the vAPI endpoint that hashicorp/vsphere logs in to:
// the same credentials, the same certificate.
func TestRESTSession(t *testing.T) {
	s, ca := startServer(t)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	login := func(password string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
			"https://"+s.Server+"/rest/com/vmware/cis/session", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(s.User, password)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close() // only the status matters
		return resp.StatusCode
	}
	if code := login(s.Password); code != http.StatusOK {
		t.Errorf("REST login with the right password: HTTP %d", code)
	}
	if code := login("wrong"); code != http.StatusUnauthorized {
		t.Errorf("REST login with a wrong password: HTTP %d, want 401", code)
	}
}
