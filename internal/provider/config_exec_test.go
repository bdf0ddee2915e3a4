package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// execValue is a kubernetes.exec block: api_version, command, args and env
// as given (nil: null), or unknown as a whole when attrs is nil.
func execValue(t *testing.T, attrs map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	ctx := context.Background()
	var sr provider.SchemaResponse
	(&windowsProvider{}).Schema(ctx, provider.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object).AttributeTypes["kubernetes"].(tftypes.Object).AttributeTypes["exec"].(tftypes.Object)
	if attrs == nil {
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
		if v, ok := attrs[name]; ok {
			vals[name] = v
		}
	}
	return tftypes.NewValue(typ, vals)
}

var stringList = tftypes.List{ElementType: tftypes.String}

// TestConfigure_exec: the exec block's settings reach the Kubernetes client's
// configuration.
func TestConfigure_exec(t *testing.T) {
	environment(t)
	config := providerConfig(t, map[string]map[string]tftypes.Value{"kubernetes": {
		"host": str("https://cluster.invalid:6443"),
		"exec": execValue(t, map[string]tftypes.Value{
			"api_version": str("client.authentication.k8s.io/v1beta1"),
			"command":     str("aws"),
			"args":        tftypes.NewValue(stringList, []tftypes.Value{str("eks"), str("get-token"), str("--cluster-name"), str("lab")}),
			"env":         tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"AWS_PROFILE": str("lab")}),
		}),
	}})
	c, _ := configure(t, config, false)
	want := &kube.Exec{APIVersion: "client.authentication.k8s.io/v1beta1", Command: "aws",
		Args: []string{"eks", "get-token", "--cluster-name", "lab"}, Env: map[string]string{"AWS_PROFILE": "lab"}}
	if !reflect.DeepEqual(c.KubeConfig.Exec, want) {
		t.Errorf("Exec %+v, want %+v", c.KubeConfig.Exec, want)
	}
}

// TestConfigure_unknownExec: an exec setting known only at apply (the
// cluster name of a cluster this run creates), or an exec block unknown as a
// whole, holds the Kubernetes client back like an unknown host.
func TestConfigure_unknownExec(t *testing.T) {
	environment(t)
	cases := map[string]struct {
		exec tftypes.Value
		want []string
	}{
		"args": {execValue(t, map[string]tftypes.Value{
			"api_version": str("client.authentication.k8s.io/v1beta1"),
			"command":     str("aws"),
			"args":        tftypes.NewValue(stringList, tftypes.UnknownValue),
		}), []string{"kubernetes.exec.args"}},
		"block": {execValue(t, nil), []string{"kubernetes.exec"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			config := providerConfig(t, map[string]map[string]tftypes.Value{"kubernetes": {"host": str("https://cluster.invalid:6443"), "exec": tc.exec}})
			var vr provider.ValidateConfigResponse
			(&windowsProvider{}).ValidateConfig(context.Background(), provider.ValidateConfigRequest{Config: config}, &vr)
			if vr.Diagnostics.HasError() {
				t.Fatalf("ValidateConfig: %v", vr.Diagnostics)
			}
			c, _ := configure(t, config, false)
			_, err := c.Kubernetes(context.Background())
			unknownError(t, err, tc.want)
		})
	}
}
