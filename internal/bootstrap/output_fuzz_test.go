package bootstrap

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

var (
	lowerSHA256  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	downloadName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// FuzzGuestOutput: what the provider reads from a guest's output and from
// the configuration's URLs and checksums never panics, and what it accepts
// is what the code after it relies on: a Windows build whose label value is
// valid and that the output reported, a lower-case SHA-256, a containerd
// version found in the URL.
func FuzzGuestOutput(f *testing.F) {
	f.Add("WINDOWS-BUILD=10.0.20348.2340\r\n")
	f.Add("noise WINDOWS-BUILD=10.0.263000000000000000000000000000000000000000000000000000000000000.1")
	f.Add("WINDOWS-BUILD=10.0.17763.1234567890123")
	f.Add("https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz")
	f.Add(strings.Repeat("aB", 32))
	f.Add("https://example.com/a%5C..%5C..%5CWindows%5Cx.exe")
	f.Add("https://example.com/%2E%2E")
	f.Fuzz(func(t *testing.T, s string) {
		if build, err := ParseWindowsBuild(s); err == nil {
			short := winversion.TrimUBR(build)
			if !strings.Contains(s, "WINDOWS-BUILD="+build) || winversion.ValidateBuild(short) != nil {
				t.Fatalf("ParseWindowsBuild(%q) = %q", s, build)
			}
			if errs := validation.IsValidLabelValue(short); len(errs) > 0 {
				t.Fatalf("ParseWindowsBuild(%q) = %q: not a label value: %v", s, build, errs)
			}
		}
		if sum, err := NormalizeSHA256(s); err == nil && !lowerSHA256.MatchString(sum) {
			t.Fatalf("NormalizeSHA256(%q) = %q", s, sum)
		}
		if v := ContainerdVersion(s); v != "" && !strings.Contains(s, v) {
			t.Fatalf("ContainerdVersion(%q) = %q", s, v)
		}
		if name, ok := strings.CutPrefix(DownloadPath(s), DownloadDir+`\`); !ok || !downloadName.MatchString(name) || strings.Trim(name, ".") == "" {
			t.Fatalf("DownloadPath(%q) = %q: not a file name in %s", s, DownloadPath(s), DownloadDir)
		}
		_ = archiveKind(s)
	})
}
