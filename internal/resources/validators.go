package resources

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wincluster/terraform-provider-windows/internal/imageref"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// Attribute validators. framework-validators' own serve wherever one fits
// (OneOf, Between, LengthBetween, RegexMatches, AlsoRequires...); the rules
// written here have no kept library that serves them as well:
//   - Kubernetes names and labels: apimachinery's validation functions (a
//     kept library) hold the rules; stringCheck only adapts them.
//   - Windows versions and builds: the provider's own release table
//     (winversion), and an unknown build is a warning, not an error.
//   - URLs: framework-validators has no URL validator.
//   - vSphere objects: the forms hashicorp/vsphere hands out for each kind
//     (vsphere/forms.go), which the finders resolve; the message lists them.
//   - node_validators.go: IPv4 addresses and CIDRs (nettypes' iptypes and
//     cidrtypes would serve, but terraform-plugin-framework-nettypes is not
//     on the Go module proxy this project builds from), positive durations
//     (timetypes.GoDuration is a custom type, not a validator: it would change
//     the attribute's type and model, and accepts 0s and negative durations),
//     computer names (LengthAtMost(15) would not say the limit is NetBIOS's),
//     multiples (framework-validators has no multiple-of validator).

// stringCheck adapts a func returning the problems with a value into a
// framework string validator, so each rule below is one line of logic with
// the attribute path and the fix in its message.
type stringCheck struct {
	description string
	check       func(string) []string
}

func (v stringCheck) Description(context.Context) string         { return v.description }
func (v stringCheck) MarkdownDescription(context.Context) string { return v.description }

func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if problems := v.check(req.ConfigValue.ValueString()); len(problems) > 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+v.description,
			fmt.Sprintf("%s: %q is not a valid %s: %s.", req.Path, req.ConfigValue.ValueString(), v.description, strings.Join(problems, "; ")))
	}
}

func dnsSubdomain() validator.String {
	return stringCheck{"Kubernetes object name (DNS-1123 subdomain)", validation.IsDNS1123Subdomain}
}

// clusterDomain is checked as kubeadm checks networking.dnsDomain (a DNS-1123
// subdomain: ValidateNetworking in cmd/kubeadm/app/apis/kubeadm/validation);
// the kubelet would otherwise start with a --cluster-domain pods cannot use.
func clusterDomain() validator.String {
	return stringCheck{"cluster domain (a DNS-1123 subdomain such as cluster.local)", validation.IsDNS1123Subdomain}
}

func dnsLabel() validator.String {
	return stringCheck{"DNS-1123 label", validation.IsDNS1123Label}
}

func labelKey() validator.String {
	return stringCheck{"Kubernetes label key", validation.IsQualifiedName}
}

func labelValue() validator.String {
	return stringCheck{"Kubernetes label value", validation.IsValidLabelValue}
}

func windowsBuild() validator.String {
	return windowsBuildValidator{}
}

func windowsVersion() validator.String {
	return stringCheck{"Windows Server version", func(s string) []string {
		if _, err := winversion.ByVersion(s); err != nil {
			return []string{"accepted values are " + strings.Join(winversion.Versions(), ", ")}
		}
		return nil
	}}
}

// windowsBuildValidator rejects malformed builds and warns about well-formed
// builds of releases this provider does not know (a newer Windows Server may
// well work, so that is not an error).
type windowsBuildValidator struct{}

func (windowsBuildValidator) Description(context.Context) string {
	return "Windows build in the form 10.0.<build>"
}
func (v windowsBuildValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (windowsBuildValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	build := req.ConfigValue.ValueString()
	if err := winversion.ValidateBuild(build); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Windows build",
			req.Path.String()+": "+err.Error()+". Use the node.kubernetes.io/windows-build label value of your nodes, or set windows_version instead.")
		return
	}
	if _, known := winversion.ByBuild(build); !known {
		var known []string
		for _, r := range winversion.Releases {
			known = append(known, r.Build+" ("+r.Version+")")
		}
		resp.Diagnostics.AddAttributeWarning(req.Path, "Unknown Windows build",
			fmt.Sprintf("%s is not a Windows Server release this provider knows (%s). It is used as given.", build, strings.Join(known, ", ")))
	}
}

var (
	sha256HexPattern = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	// The characters Windows refuses in a path (learn.microsoft.com "Naming
	// Files, Paths, and Namespaces": < > : " | ? * and 1 through 31; NUL
	// ends it).
	windowsPathRegexp = regexp.MustCompile(`^[A-Za-z]:\\[^"*?<>|:\x00-\x1f]*$`)
)

// sha256Hex and windowsPath are pattern rules: framework-validators'
// RegexMatches serves them, with its diagnostic ("Attribute kubelet_sha256
// must be ..., got: ..."), the one the other library validators give.
func sha256Hex() validator.String {
	return stringvalidator.RegexMatches(sha256HexPattern,
		"must be the 64 hexadecimal digits of the file's SHA-256 (sha256sum FILE, or Get-FileHash -Algorithm SHA256 FILE)")
}

func windowsPath() validator.String {
	return stringvalidator.RegexMatches(windowsPathRegexp,
		`must be an absolute Windows path such as C:\k\tool.exe (drive letter, backslashes, none of " * ? < > | : and no control characters)`)
}

func httpURL() validator.String {
	return stringCheck{"http(s) URL", func(s string) []string {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return []string{"write an absolute http:// or https:// URL"}
		}
		if strings.ContainsAny(s, "\"`$'") {
			return []string{"percent-encode quotes, backticks and $ (the URL is passed to PowerShell)"}
		}
		return nil
	}}
}

// vsphereObject checks that a value names a vSphere object of kind in one of
// the forms its finders resolve (every form hashicorp/vsphere's data sources
// and resources hand out for it), and lists them when it does not.
func vsphereObject(kind vsphere.Kind) validator.String { return vsphereObjectValidator{kind} }

type vsphereObjectValidator struct{ kind vsphere.Kind }

func (v vsphereObjectValidator) Description(context.Context) string {
	return "a " + v.kind.Noun + ": " + v.kind.Accepted()
}

func (v vsphereObjectValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v vsphereObjectValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.kind.Check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+v.kind.Noun, fmt.Sprintf("%s: %v.", req.Path, err))
	}
}

// accepts is the sentence of an attribute's documentation that lists kind's
// forms.
func accepts(kind vsphere.Kind) string {
	return " Accepts " + kind.Markdown() + "."
}

// imageReference checks a container image reference as containerd reads it
// (imageref.Validate): a value that is not one could otherwise end the
// string it is written into, in containerd's configuration or a script.
func imageReference() validator.String { return imageReferenceValidator{} }

type imageReferenceValidator struct{}

func (imageReferenceValidator) Description(context.Context) string {
	return "a container image reference, [registry/]repository:tag or @sha256:digest"
}

func (v imageReferenceValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (imageReferenceValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := imageref.Validate(req.Path.String(), req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid container image reference", err.Error()+".")
	}
}

// reservedKey matches label and taint keys in the domains Kubernetes
// reserves (kubernetes.io, k8s.io and their subdomains).
var reservedKey = regexp.MustCompile(`^([^/]*\.)?(kubernetes\.io|k8s\.io)/`)

// kubeletLabel matches the reserved labels a kubelet may set on its own
// Node under the NodeRestriction admission plugin
// (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).
var kubeletLabel = regexp.MustCompile(`^(node|kubelet)\.kubernetes\.io/`)

// nodeLabelKey is a label key windows_node may own: a valid key, outside
// the reserved domains but for the node.kubernetes.io and
// kubelet.kubernetes.io labels a kubelet sets itself. The kubelet refuses
// other reserved --node-labels, and the provider's admission policy
// (terraform-provider-windows-nodes) refuses them on its patch.
func nodeLabelKey() validator.String {
	return stringCheck{"node label key", func(s string) []string {
		problems := validation.IsQualifiedName(s)
		if reservedKey.MatchString(s) && !kubeletLabel.MatchString(s) {
			problems = append(problems, "keys in the kubernetes.io and k8s.io domains are the cluster's "+
				"(node-role.kubernetes.io and node-restriction.kubernetes.io labels are an administrator's to set); "+
				"use a prefix of your own, such as example.com/, or node.kubernetes.io/")
		}
		return problems
	}}
}

// nodeTaintKey is a taint key windows_node may own: a valid key outside the
// reserved domains, whose taints the node lifecycle controllers set
// (node.kubernetes.io/not-ready, out-of-service, ...) and the provider's
// admission policy keeps them to.
func nodeTaintKey() validator.String {
	return stringCheck{"node taint key", func(s string) []string {
		problems := validation.IsQualifiedName(s)
		if reservedKey.MatchString(s) {
			problems = append(problems, "taint keys in the kubernetes.io and k8s.io domains are the cluster's "+
				"(node.kubernetes.io/out-of-service, not-ready, ...); use a prefix of your own, such as example.com/, or none (os=windows)")
		}
		return problems
	}}
}
