package resources

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/util/validation"
)

// computerName: a Kubernetes node name that is also a valid Windows computer
// name (NetBIOS: at most 15 characters).
func computerName() validator.String {
	return stringCheck{"node name (DNS-1123 label of at most 15 characters)", func(s string) []string {
		problems := validation.IsDNS1123Label(s)
		if len(s) > 15 {
			problems = append(problems, fmt.Sprintf("it has %d characters; Windows computer names (NetBIOS) have at most 15", len(s)))
		}
		return problems
	}}
}

func ipv4Address() validator.String {
	return stringCheck{"IPv4 address", func(s string) []string {
		if ip := net.ParseIP(s); ip == nil || ip.To4() == nil {
			return []string{"write a dotted IPv4 address such as 10.0.0.21"}
		}
		return nil
	}}
}

func cidr() validator.String {
	return stringCheck{"CIDR", func(s string) []string {
		if _, _, err := net.ParseCIDR(s); err != nil {
			return []string{"write a network in CIDR notation such as 10.96.0.0/12"}
		}
		return nil
	}}
}

func httpsURL() validator.String {
	return stringCheck{"https URL", func(s string) []string {
		if u, err := url.Parse(s); err != nil || u.Scheme != "https" || u.Host == "" {
			return []string{"write the API server URL, for example https://10.0.0.10:6443"}
		}
		return nil
	}}
}

func duration() validator.String {
	return stringCheck{"duration", func(s string) []string {
		if d, err := time.ParseDuration(s); err != nil || d <= 0 {
			return []string{"write a positive Go duration such as 90s, 10m or 1h"}
		}
		return nil
	}}
}

// multipleOf rejects integers that are not multiples of n (vSphere memory
// sizes are multiples of 4 MiB).
type multipleOf int64

func (v multipleOf) Description(context.Context) string {
	return fmt.Sprintf("a multiple of %d", int64(v))
}
func (v multipleOf) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v multipleOf) ValidateInt64(_ context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if n := req.ConfigValue.ValueInt64(); n%int64(v) != 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid value",
			fmt.Sprintf("%s: %d is not a multiple of %d; use %d or %d.", req.Path, n, int64(v), n-n%int64(v), n-n%int64(v)+int64(v)))
	}
}
