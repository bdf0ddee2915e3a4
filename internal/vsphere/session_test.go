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

// otherCA writes the PEM of a CA that did not sign the simulator's
// certificate and returns its path.
func otherCA(t *testing.T) string {
	t.Helper()
	bundle, err := pki.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bundle.CAFile
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
		cfg    func(vsphere.Config) vsphere.Config
		want   []string
		is     error    // the lasting kind, or nil
		absent []string // settings the user did not use, not to be named
	}{
		"unknown CA": {cfg: func(c vsphere.Config) vsphere.Config { return c },
			want: []string{"cannot verify the TLS certificate of vCenter " + srv.Server, "vsphere.ca_file", "VSPHERE_ALLOW_UNVERIFIED_SSL"},
			is:   vsphere.ErrCertificateUnverified},
		"CA file of another CA": {cfg: func(c vsphere.Config) vsphere.Config {
			c.CAFile, c.From = otherCA(t), map[string]string{"ca_file": "VSPHERE_CA_FILE"}
			return c
		}, want: []string{"VSPHERE_CA_FILE does not hold the CA that signed it"}, is: vsphere.ErrCertificateUnverified},
		"wrong password": {cfg: func(c vsphere.Config) vsphere.Config { c.CAFile, c.Password = caFile, "wrong"; return c },
			want: []string{"vCenter " + srv.Server + " rejected the login", "vsphere.password", "VSPHERE_PASSWORD"},
			is:   vsphere.ErrLoginRefused},
		"wrong password from the environment": {cfg: func(c vsphere.Config) vsphere.Config {
			c.CAFile, c.Password = caFile, "wrong"
			c.From = map[string]string{"user": "vsphere.user", "password": "VSPHERE_PASSWORD"}
			return c
		}, want: []string{"check vsphere.user and VSPHERE_PASSWORD"}, is: vsphere.ErrLoginRefused, absent: []string{"vsphere.password"}},
		"wrong password in the provider block": {cfg: func(c vsphere.Config) vsphere.Config {
			c.CAFile, c.Password = caFile, "wrong"
			c.From = map[string]string{"user": "VSPHERE_USER", "password": "vsphere.password"}
			return c
		}, want: []string{"check VSPHERE_USER and vsphere.password"}, is: vsphere.ErrLoginRefused, absent: []string{"VSPHERE_PASSWORD"}},
		"unreachable": {cfg: func(c vsphere.Config) vsphere.Config { c.Server, c.CAFile = "127.0.0.1:1", caFile; return c },
			want: []string{"cannot reach vCenter 127.0.0.1:1", "VSPHERE_SERVER"}},
		"no server": {cfg: func(c vsphere.Config) vsphere.Config { c.Server = ""; return c },
			want: []string{"no vSphere server is configured", "VSPHERE_SERVER"}},
		"bad CA file": {cfg: func(c vsphere.Config) vsphere.Config { c.CAFile = filepath.Join(t.TempDir(), "missing.pem"); return c },
			want: []string{"reading vsphere.ca_file"}},
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
			for _, name := range tc.absent {
				if strings.Contains(err.Error(), name) {
					t.Errorf("error %q names %s, which the user did not set", err, name)
				}
			}
			if got := errors.Is(err, vsphere.ErrLoginRefused) || errors.Is(err, vsphere.ErrCertificateUnverified); tc.is == nil && got {
				t.Errorf("error %q is of a lasting kind; a retry may succeed", err)
			} else if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
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
