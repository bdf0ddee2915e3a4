package resources

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/guest"
)

func TestWarnAdminUser(t *testing.T) {
	s := schema.Schema{Attributes: map[string]schema.Attribute{"admin_user": schema.StringAttribute{Optional: true}}}
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"admin_user": tftypes.String}}
	for _, tc := range []struct {
		user any
		warn bool
	}{{"ops", true}, {"Administrator", false}, {"administrator", false}, {nil, false}, {tftypes.UnknownValue, false}} {
		plan := tfsdk.Plan{Schema: s, Raw: tftypes.NewValue(typ, map[string]tftypes.Value{"admin_user": tftypes.NewValue(tftypes.String, tc.user)})}
		var diags diag.Diagnostics
		warnAdminUser(context.Background(), plan, &diags)
		if diags.HasError() {
			t.Fatal(diags)
		}
		got := diags.WarningsCount() == 1
		if got != tc.warn {
			t.Fatalf("admin_user %v: warnings %v, want a warning: %v", tc.user, diags, tc.warn)
		}
		if got {
			d := diags.Warnings()[0]
			for _, want := range []string{"UAC remote restrictions", "built-in Administrator", "RID 500", "LocalAccountTokenFilterPolicy"} {
				if !strings.Contains(d.Summary()+d.Detail(), want) {
					t.Errorf("warning %q / %q does not name %q", d.Summary(), d.Detail(), want)
				}
			}
		}
	}
}

func TestUACCause(t *testing.T) {
	denied := &guest.StageError{Stage: `join step "containerd-service"`, ExitCode: 1, Evidence: "New-Service : Service 'containerd' cannot be created due to the following error: Access is denied"}
	other := &guest.StageError{Stage: `join step "kubelet"`, ExitCode: 1, Evidence: "something else"}
	if c := uacCause("ops", denied); !strings.Contains(c, "UAC remote restrictions") || !strings.Contains(c, "LocalAccountTokenFilterPolicy") {
		t.Errorf("denied step for ops: %q", c)
	}
	if c := uacCause("Administrator", denied); c != "" {
		t.Errorf("denied step for Administrator: %q", c)
	}
	if c := uacCause("ops", other); c != "" {
		t.Errorf("other failure: %q", c)
	}
	if c := uacCause("ops", errors.New("Access is denied")); c != "" {
		t.Errorf("not a step: %q", c)
	}
}
