package provider

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

var unknownString = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

// providerConfig builds the provider configuration Terraform would send:
// the given attributes of each block, the others null. A block absent from
// blocks is null (not written); a nil attribute map makes the block unknown
// as a whole (a dynamic block over a list known only at apply).
func providerConfig(t *testing.T, blocks map[string]map[string]tftypes.Value) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	var sr provider.SchemaResponse
	(&windowsProvider{}).Schema(ctx, provider.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for name, bt := range typ.AttributeTypes {
		attrs, ok := blocks[name]
		switch {
		case !ok:
			vals[name] = tftypes.NewValue(bt, nil)
		case attrs == nil:
			vals[name] = tftypes.NewValue(bt, tftypes.UnknownValue)
		default:
			ot := bt.(tftypes.Object)
			inner := map[string]tftypes.Value{}
			for an, at := range ot.AttributeTypes {
				inner[an] = tftypes.NewValue(at, nil)
			}
			for an, v := range attrs {
				if _, ok := ot.AttributeTypes[an]; !ok {
					t.Fatalf("no attribute %s.%s", name, an)
				}
				inner[an] = v
			}
			vals[name] = tftypes.NewValue(ot, inner)
		}
	}
	return tfsdk.Config{Schema: sr.Schema, Raw: tftypes.NewValue(typ, vals)}
}

// environment points every setting somewhere recognisable, so that a value
// taken from it shows.
func environment(t *testing.T) {
	for name, value := range map[string]string{
		"KUBE_HOST": "https://env.invalid:6443", "KUBE_TOKEN": "env-token", "KUBECONFIG": "/env/kubeconfig",
		"KUBE_CONFIG_PATH": "", "KUBE_CONFIG_PATHS": "", "KUBE_CTX": "env-context",
		"VSPHERE_SERVER": "env-vcenter.invalid", "VSPHERE_USER": "env-user", "VSPHERE_PASSWORD": "env-password",
	} {
		t.Setenv(name, value)
	}
}

func configure(t *testing.T, config tfsdk.Config, deferralAllowed bool) (*clients.Clients, *provider.ConfigureResponse) {
	t.Helper()
	req := provider.ConfigureRequest{Config: config, ClientCapabilities: provider.ConfigureProviderClientCapabilities{DeferralAllowed: deferralAllowed}}
	resp := &provider.ConfigureResponse{}
	(&windowsProvider{}).Configure(context.Background(), req, resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("Configure: %v", resp.Diagnostics)
	}
	c, ok := resp.ResourceData.(*clients.Clients)
	if !ok {
		t.Fatalf("ResourceData is %T, want *clients.Clients", resp.ResourceData)
	}
	return c, resp
}

// unknownError asserts that err is the unknown-settings error naming want,
// and that its message says when the value is known and what to do.
func unknownError(t *testing.T, err error, want []string) {
	t.Helper()
	var u *clients.UnknownConfigError
	if !errors.As(err, &u) {
		t.Fatalf("got %v (%T), want *clients.UnknownConfigError", err, err)
	}
	if !reflect.DeepEqual(u.Attributes, want) {
		t.Errorf("attributes %q, want %q", u.Attributes, want)
	}
	msg := err.Error()
	for _, s := range append([]string{"unknown until apply", "-target", "-allow-deferral"}, want...) {
		if s == "kubernetes" || s == "vsphere" {
			s += " block"
		}
		if !strings.Contains(msg, s) {
			t.Errorf("the message does not say %q:\n%s", s, msg)
		}
	}
	if strings.Contains(msg, "env.invalid") || strings.Contains(msg, "env-vcenter") {
		t.Errorf("the message mentions the environment's endpoint:\n%s", msg)
	}
}

// Unknown Kubernetes settings: the client refuses, naming them, and nothing
// of the kubernetes block comes from the environment (KUBE_HOST, KUBECONFIG);
// the vsphere block, known, resolves as usual.
func TestConfigure_unknownKubernetesSettings(t *testing.T) {
	paths := tftypes.List{ElementType: tftypes.String}
	cases := map[string]struct {
		block map[string]tftypes.Value
		want  []string
	}{
		"host unknown, token known": {map[string]tftypes.Value{"host": unknownString, "token": str("t")}, []string{"kubernetes.host"}},
		"host and token unknown":    {map[string]tftypes.Value{"host": unknownString, "token": unknownString}, []string{"kubernetes.host", "kubernetes.token"}},
		"config_path unknown":       {map[string]tftypes.Value{"config_path": unknownString}, []string{"kubernetes.config_path"}},
		"config_paths unknown":      {map[string]tftypes.Value{"config_paths": tftypes.NewValue(paths, tftypes.UnknownValue)}, []string{"kubernetes.config_paths"}},
		"one of config_paths unknown": {map[string]tftypes.Value{"config_paths": tftypes.NewValue(paths, []tftypes.Value{str("/a"), unknownString, unknownString})},
			[]string{"kubernetes.config_paths"}},
		"insecure unknown":    {map[string]tftypes.Value{"insecure": tftypes.NewValue(tftypes.Bool, tftypes.UnknownValue)}, []string{"kubernetes.insecure"}},
		"whole block unknown": {nil, []string{"kubernetes"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			environment(t)
			c, resp := configure(t, providerConfig(t, map[string]map[string]tftypes.Value{"kubernetes": tc.block}), false)
			if resp.Deferred != nil {
				t.Errorf("deferred %v although the CLI does not allow deferral", resp.Deferred)
			}
			if !reflect.DeepEqual(c.KubeConfig, kube.Config{}) {
				t.Errorf("the Kubernetes settings were resolved anyway: %+v", c.KubeConfig)
			}
			_, err := c.Kubernetes(context.Background())
			unknownError(t, err, tc.want)
			if _, err := c.Cluster(context.Background()); !clients.IsUnknownConfig(err) {
				t.Errorf("Cluster: got %v, want the unknown-settings error", err)
			}
			if c.VSphereConfig.Server != "env-vcenter.invalid" {
				t.Errorf("vSphere server %q: the known vsphere block no longer resolves from the environment", c.VSphereConfig.Server)
			}
		})
	}
}

func TestConfigure_unknownVSphereSettings(t *testing.T) {
	environment(t)
	c, _ := configure(t, providerConfig(t, map[string]map[string]tftypes.Value{
		"vsphere": {"server": str("vcenter.example"), "password": unknownString},
	}), false)
	if !reflect.DeepEqual(c.VSphereConfig, vsphere.Config{}) {
		t.Errorf("the vSphere settings were resolved anyway: %+v", c.VSphereConfig)
	}
	_, err := c.VSphere(context.Background())
	unknownError(t, err, []string{"vsphere.password"})
	if !strings.Contains(err.Error(), "VSPHERE_*") {
		t.Errorf("the message does not name the vSphere variables it ignores:\n%s", err)
	}
	if c.KubeConfig.Host != "https://env.invalid:6443" || len(c.KubeConfigUnknown) != 0 {
		t.Errorf("Kubernetes settings %+v, unknown %q: want them from the environment", c.KubeConfig, c.KubeConfigUnknown)
	}
}

// Null is not unknown: settings left out still come from the environment.
func TestConfigure_nullSettingsFromEnvironment(t *testing.T) {
	environment(t)
	for name, blocks := range map[string]map[string]map[string]tftypes.Value{
		"no blocks":    nil,
		"empty blocks": {"kubernetes": {}, "vsphere": {}},
		"host set":     {"kubernetes": {"host": str("https://configured.invalid:6443")}},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := configure(t, providerConfig(t, blocks), true)
			if len(c.KubeConfigUnknown)+len(c.VSphereConfigUnknown) != 0 {
				t.Errorf("unknown %q %q in a known configuration", c.KubeConfigUnknown, c.VSphereConfigUnknown)
			}
			wantHost := "https://env.invalid:6443"
			if name == "host set" {
				wantHost = "https://configured.invalid:6443"
			}
			if c.KubeConfig.Host != wantHost || c.KubeConfig.Token != "env-token" || !reflect.DeepEqual(c.KubeConfig.ConfigPaths, []string{"/env/kubeconfig"}) {
				t.Errorf("Kubernetes settings %+v, want the environment's (host %s)", c.KubeConfig, wantHost)
			}
			if c.VSphereConfig.Server != "env-vcenter.invalid" || c.VSphereConfig.Password != "env-password" {
				t.Errorf("vSphere settings not from the environment: server %q", c.VSphereConfig.Server)
			}
		})
	}
}

// A CLI that allows deferral is asked to defer when anything is unknown, and
// only then.
func TestConfigure_deferral(t *testing.T) {
	environment(t)
	unknown := providerConfig(t, map[string]map[string]tftypes.Value{"vsphere": {"server": unknownString}})
	known := providerConfig(t, map[string]map[string]tftypes.Value{"vsphere": {"server": str("vcenter.example")}})

	c, resp := configure(t, unknown, true)
	if resp.Deferred == nil || resp.Deferred.Reason != provider.DeferredReasonProviderConfigUnknown {
		t.Errorf("deferred %v, want reason ProviderConfigUnknown", resp.Deferred)
	}
	// The clients are still handed over, refusing: the framework does not
	// defer every call (apply is never deferred).
	if _, err := c.VSphere(context.Background()); !clients.IsUnknownConfig(err) {
		t.Errorf("VSphere: got %v, want the unknown-settings error", err)
	}
	if _, resp := configure(t, unknown, false); resp.Deferred != nil {
		t.Errorf("deferred %v without the client's consent", resp.Deferred)
	}
	if _, resp := configure(t, known, true); resp.Deferred != nil {
		t.Errorf("deferred %v with a known configuration", resp.Deferred)
	}
}
