package clients_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestVSphereRemembersLastingFailures: a refused login is the run's answer
// for every resource (one login attempt, not one per resource: each refused
// password counts towards vCenter's lockout); an unreachable server is
// tried again by the next resource.
func TestVSphereRemembersLastingFailures(t *testing.T) {
	bundle, err := pki.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bundle.CA.ServingCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vcsim.Start(context.Background(), vcsim.Options{
		Certificate: cert, RootCAs: bundle.CA.Pool(), User: "administrator@vsphere.local", Password: "s3cret-Passw0rd",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)

	refused := &clients.Clients{VSphereConfig: vsphere.Config{Server: srv.Server, User: srv.User, Password: "wrong", CAFile: bundle.CAFile}}
	_, first := refused.VSphere(t.Context())
	if !errors.Is(first, vsphere.ErrLoginRefused) {
		t.Fatalf("wrong password: %v, want ErrLoginRefused", first)
	}
	// The same error value, not an equal one: no second login was tried.
	if _, again := refused.VSphere(t.Context()); again != first { //nolint:errorlint // identity, not kind
		t.Errorf("second use logged in again (%v); want the first refusal remembered", again)
	}

	unreachable := &clients.Clients{VSphereConfig: vsphere.Config{Server: "127.0.0.1:1", User: srv.User, Password: srv.Password}}
	_, first = unreachable.VSphere(t.Context())
	if _, again := unreachable.VSphere(t.Context()); first == nil || again == first { //nolint:errorlint // identity, not kind
		t.Errorf("unreachable: %v then %v; want two attempts, each failing", first, again)
	}

	good := &clients.Clients{VSphereConfig: vsphere.Config{Server: srv.Server, User: srv.User, Password: srv.Password, CAFile: bundle.CAFile}}
	a, err := good.VSphere(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := good.VSphere(t.Context()); a != b {
		t.Error("a second use made a second session")
	}
	_ = a.Logout(t.Context())
}
