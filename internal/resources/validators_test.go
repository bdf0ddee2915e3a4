package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// validateString runs v on value as the attribute at p and returns the
// error diagnostics' details, the warnings' details.
func validateString(v validator.String, p path.Path, value types.String) (errs, warnings []string) {
	var resp validator.StringResponse
	v.ValidateString(context.Background(), validator.StringRequest{Path: p, ConfigValue: value}, &resp)
	for _, d := range resp.Diagnostics.Errors() {
		errs = append(errs, d.Summary()+": "+d.Detail())
	}
	for _, d := range resp.Diagnostics.Warnings() {
		warnings = append(warnings, d.Summary()+": "+d.Detail())
	}
	return errs, warnings
}

// TestStringValidators: each rule accepts what it should, and its error
// names the attribute, the value and the fix. Null and unknown values (not
// known before apply) are left alone.
func TestStringValidators(t *testing.T) {
	sha := strings.Repeat("aB", 32)
	cases := []struct {
		name  string
		v     validator.String
		attr  path.Path
		good  []string
		bad   string
		wants []string
	}{
		{"nodeLabelKey", nodeLabelKey(), path.Root("labels"), []string{"example.com/pool", "pool", "node.kubernetes.io/pool", "kubelet.kubernetes.io/x"},
			"node-restriction.kubernetes.io/secure", []string{"labels", "node-restriction.kubernetes.io/secure", "kubernetes.io and k8s.io domains", "example.com/"}},
		{"nodeLabelKey role", nodeLabelKey(), path.Root("labels"), nil,
			"node-role.kubernetes.io/worker", []string{"node-role.kubernetes.io/worker", "administrator's"}},
		{"nodeTaintKey", nodeTaintKey(), path.Root("taints").AtListIndex(0).AtName("key"), []string{"os", "example.com/dedicated"},
			"node.kubernetes.io/out-of-service", []string{"taints[0].key", "node.kubernetes.io/out-of-service", "prefix of your own"}},
		{"sha256Hex", sha256Hex(), path.Root("kubelet_sha256"), []string{sha},
			"abc", []string{"Attribute kubelet_sha256 must be the 64 hexadecimal digits", "Get-FileHash", "got: abc"}},
		{"sha256Hex too long", sha256Hex(), path.Root("kubelet_sha256"), nil,
			sha + "0", []string{"Attribute kubelet_sha256 must be the 64 hexadecimal digits"}},
		{"windowsPath", windowsPath(), path.Root("extra_files").AtListIndex(0).AtName("destination"),
			[]string{`C:\k\wins.exe`, `d:\`},
			`C:\k\*.exe`, []string{`Attribute extra_files[0].destination must be an absolute Windows path such as C:\k\tool.exe`, `got: C:\k\*.exe`}},
		{"windowsPath relative", windowsPath(), path.Root("destination"), nil,
			`k\wins.exe`, []string{"must be an absolute Windows path"}},
		{"computerName", computerName(), path.Root("name"), []string{"win-0"},
			"win-node-0123456789", []string{`name: "win-node-0123456789" is not a valid node name`, "NetBIOS"}},
		{"ipv4Address", ipv4Address(), path.Root("gateway"), []string{"10.0.0.1"},
			"fd00::1", []string{`gateway: "fd00::1" is not a valid IPv4 address`, "10.0.0.21"}},
		{"cidr", cidr(), path.Root("service_cidr"), []string{"10.96.0.0/12", "fd00::/108"},
			"10.96.0.0", []string{`service_cidr: "10.96.0.0" is not a valid CIDR`}},
		{"duration", duration(), path.Root("drain").AtName("timeout"), []string{"90s", "1h30m"},
			"0s", []string{`drain.timeout: "0s" is not a valid duration`, "positive"}},
		{"httpsURL", httpsURL(), path.Root("api_server"), []string{"https://10.0.0.10:6443"},
			"http://10.0.0.10:6443", []string{`api_server: "http://10.0.0.10:6443" is not a valid https URL`}},
		{"imageReference", imageReference(), path.Root("pause_image"), []string{"registry.k8s.io/pause:3.10.1",
			"mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0@sha256:" + strings.Repeat("b4", 32)},
			"registry.k8s.io/pause:3.10\"\n[plugins.x]", []string{"Invalid container image reference: pause_image", "is not a container image reference"}},
		{"imageReference short", imageReference(), path.Root("prepull_images").AtListIndex(1), nil,
			"pause:3.10", []string{`prepull_images[1] "pause:3.10" is a short name`, "docker.io/library/pause:3.10"}},
		{"httpURL quoting", httpURL(), path.Root("artifacts_base_url"), []string{"http://mirror/k8s", "https://dl.k8s.io/release"},
			"https://mirror/$x", []string{"percent-encode"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ok := range append(c.good, "") {
				value := types.StringValue(ok)
				if ok == "" {
					value = types.StringNull()
				}
				if errs, _ := validateString(c.v, c.attr, value); len(errs) > 0 {
					t.Errorf("%q refused: %v", ok, errs)
				}
			}
			if errs, _ := validateString(c.v, c.attr, types.StringUnknown()); len(errs) > 0 {
				t.Errorf("unknown value refused: %v", errs)
			}
			errs, _ := validateString(c.v, c.attr, types.StringValue(c.bad))
			if len(errs) != 1 {
				t.Fatalf("%q: %d errors %v, want 1", c.bad, len(errs), errs)
			}
			for _, want := range c.wants {
				if !strings.Contains(errs[0], want) {
					t.Errorf("%q: error %q does not say %q", c.bad, errs[0], want)
				}
			}
		})
	}
}
