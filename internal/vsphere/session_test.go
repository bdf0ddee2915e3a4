package vsphere_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// startVCSim serves the sandbox's vCenter simulator with a certificate from a
// fresh CA and returns it with that CA's PEM.
func startVCSim(t testing.TB) (*vcsim.Server, string) {
	t.Helper()
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
	return srv, bundle.CAFile
}

func TestNewClient(t *testing.T) {
	srv, caFile := startVCSim(t)
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	good := vsphere.Config{Server: srv.Server, User: srv.User, Password: srv.Password}

	t.Run("CA file verifies the certificate", func(t *testing.T) {
		cfg := good
		cfg.CAFile = caFile
		c, err := vsphere.NewClient(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.URL.Host != srv.Server || c.URL.Path != "/sdk" {
			t.Errorf("URL = %s, want https://%s/sdk", c.URL, srv.Server)
		}
		if !c.IsVC() {
			t.Error("the session does not see a vCenter")
		}
	})
	t.Run("CA PEM verifies the certificate", func(t *testing.T) {
		cfg := good
		cfg.CACertificate = string(caPEM)
		if _, err := vsphere.NewClient(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	})

	failures := map[string]struct {
		cfg  func(vsphere.Config) vsphere.Config
		want []string
	}{
		"unknown CA": {func(c vsphere.Config) vsphere.Config { return c },
			[]string{"cannot verify the TLS certificate of vCenter " + srv.Server, "vsphere.ca_file"}},
		"wrong password": {func(c vsphere.Config) vsphere.Config { c.CAFile, c.Password = caFile, "wrong"; return c },
			[]string{"vCenter " + srv.Server + " rejected the login", "vsphere.password"}},
		"unreachable": {func(c vsphere.Config) vsphere.Config { c.Server, c.CAFile = "127.0.0.1:1", caFile; return c },
			[]string{"cannot reach vCenter 127.0.0.1:1", "VSPHERE_SERVER"}},
		"no server": {func(c vsphere.Config) vsphere.Config { c.Server = ""; return c },
			[]string{"no vSphere server is configured", "VSPHERE_SERVER"}},
		"bad CA file": {func(c vsphere.Config) vsphere.Config { c.CAFile = filepath.Join(t.TempDir(), "missing.pem"); return c },
			[]string{"reading vsphere.ca_file"}},
	}
	for name, tc := range failures {
		t.Run(name, func(t *testing.T) {
			_, err := vsphere.NewClient(t.Context(), tc.cfg(good))
			if err == nil {
				t.Fatal("NewClient succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), srv.Password) {
				t.Errorf("error %q leaks the password", err)
			}
		})
	}

	t.Run("allow_unverified_ssl is an explicit opt-in", func(t *testing.T) {
		cfg := good
		cfg.AllowUnverifiedSSL = true
		if _, err := vsphere.NewClient(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSDKURLRefusesHTTP: an http:// server would send the password in clear
// text; it is refused, naming the attribute and the opt-in, unless opted in.
func TestSDKURLRefusesHTTP(t *testing.T) {
	_, err := vsphere.Config{Server: "http://vc.example"}.SDKURL()
	if !errors.Is(err, vsphere.ErrUnencryptedHTTP) || !strings.Contains(err.Error(), "vsphere.server") || !strings.Contains(err.Error(), "allow_unencrypted_http = true") {
		t.Errorf("http:// = %v: want vsphere.ErrUnencryptedHTTP naming vsphere.server and the opt-in", err)
	}
	if u, err := (vsphere.Config{Server: "http://vc.example", AllowUnencryptedHTTP: true}).SDKURL(); err != nil || u.String() != "http://vc.example/sdk" {
		t.Errorf("opted in: %v, %v", u, err)
	}
	for _, server := range []string{"vc.example", "https://vc.example", "vc.example:8443"} {
		if _, err := (vsphere.Config{Server: server}).SDKURL(); err != nil {
			t.Errorf("%s: %v", server, err)
		}
	}
	if _, err := (vsphere.Config{Server: "ftp://vc.example"}).SDKURL(); err == nil {
		t.Error("ftp:// accepted")
	}
}
