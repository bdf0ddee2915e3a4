package resources

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/psquote"
	"github.com/wincluster/terraform-provider-windows/internal/winpool"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// FuzzStringValidators: every string validator of the schemas, on any
// value, never panics, names the attribute in its error, and what it accepts
// is what the code after the plan relies on: a computer name that fits
// NetBIOS and a command line, an IPv4 address, a CIDR, a URL the image build
// accepts too (bootstrap.Artifact.Validate), a Windows path with no control
// character, a positive duration, a label the join accepts, a pool prefix
// whose member names are computer names.
func FuzzStringValidators(f *testing.F) {
	for _, s := range []string{"win-0", "10.0.0.21", "10.96.0.0/12", "https://10.0.0.10:6443", "http://mirror/k8s", `C:\k\wins.exe`,
		"90s", "10.0.20348", "2022", "v1.36.3", "linux-daemonset:kube-system/kube-proxy", "example.com/pool", strings.Repeat("aB", 32),
		"https://h/\u2019$(calc)", "C:\\k\\a\nb", "C:\\k\\it\u2019s", "-1s", "ssh-ed25519 AAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		accepts := func(v validator.String, s string) bool {
			errs, _ := validateString(v, path.Root("attr"), types.StringValue(s))
			for _, e := range errs {
				if !strings.Contains(e, "attr") {
					t.Fatalf("the error for %q does not name the attribute: %s", s, e)
				}
			}
			return len(errs) == 0
		}
		if accepts(computerName(), s) && (len(s) > 15 || psquote.Arg(s) != s) {
			t.Fatalf("computerName accepted %q", s)
		}
		if accepts(namePrefix(), s) && !accepts(computerName(), s+"-"+strings.Repeat("a", winpool.NameSuffixLength)) {
			t.Fatalf("namePrefix accepted %q, whose member names are not computer names", s)
		}
		if accepts(ipv4Address(), s) && net.ParseIP(s).To4() == nil {
			t.Fatalf("ipv4Address accepted %q", s)
		}
		if accepts(cidr(), s) {
			if _, _, err := net.ParseCIDR(s); err != nil {
				t.Fatalf("cidr accepted %q", s)
			}
		}
		if accepts(httpsURL(), s) {
			if u, err := url.Parse(s); err != nil || u.Scheme != "https" {
				t.Fatalf("httpsURL accepted %q", s)
			}
		}
		if accepts(httpURL(), s) {
			a := bootstrap.Artifact{Name: "x", URL: s, SHA256: strings.Repeat("ab", 32), Path: `C:\k\x.exe`}
			if err := a.Validate(); err != nil {
				t.Fatalf("httpURL accepted %q, the image build refuses it: %v", s, err)
			}
		}
		if accepts(windowsPath(), s) && psquote.CheckArg(s) != nil {
			t.Fatalf("windowsPath accepted %q", s)
		}
		if accepts(duration(), s) {
			if d, err := time.ParseDuration(s); err != nil || d <= 0 {
				t.Fatalf("duration accepted %q", s)
			}
		}
		if accepts(windowsBuild(), s) && winversion.ValidateBuild(s) != nil {
			t.Fatalf("windowsBuild accepted %q", s)
		}
		if accepts(sha256Hex(), s) {
			if _, err := bootstrap.NormalizeSHA256(s); err != nil {
				t.Fatalf("sha256Hex accepted %q", s)
			}
		}
		key, value, _ := strings.Cut(s, "=")
		if accepts(labelKey(), key) && accepts(labelValue(), value) {
			if errs := append(validation.IsQualifiedName(key), validation.IsValidLabelValue(value)...); len(errs) > 0 {
				t.Fatalf("label %q=%q accepted: %v", key, value, errs)
			}
		}
		for _, v := range []validator.String{dnsSubdomain(), dnsLabel(), windowsVersion(), kubernetesRelease(), checkID(), hostKeyValidator{}} {
			accepts(v, s)
		}
	})
}

// FuzzMultipleOf: memory sizes; the fix the error proposes is a multiple.
func FuzzMultipleOf(f *testing.F) {
	f.Add(int64(4096))
	f.Add(int64(-5))
	f.Add(int64(-9223372036854775808))
	f.Fuzz(func(t *testing.T, n int64) {
		var resp validator.Int64Response
		multipleOf(4).ValidateInt64(context.Background(), validator.Int64Request{Path: path.Root("memory_mb"), ConfigValue: types.Int64Value(n)}, &resp)
		if resp.Diagnostics.HasError() != (n%4 != 0) {
			t.Fatalf("multipleOf(4) on %d: %v", n, resp.Diagnostics)
		}
	})
}
