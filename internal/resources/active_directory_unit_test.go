package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/addirectory"
	"github.com/wincluster/terraform-provider-windows/internal/clients"
)

// TestPlanActiveDirectory: the plan names the attribute that is wrong, and
// the provider's missing join account, and warns when accounts would stay.
func TestPlanActiveDirectory(t *testing.T) {
	ctx := context.Background()
	adTypes := map[string]attr.Type{"domain": types.StringType, "ou": types.StringType}
	machine := func(domain, ou string) machineModel {
		return machineModel{ActiveDirectory: types.ObjectValueMust(adTypes, map[string]attr.Value{"domain": types.StringValue(domain), "ou": types.StringValue(ou)})}
	}
	joins := &clients.Clients{ADConfig: addirectory.Config{JoinUser: "svc", JoinPassword: "p", LDAPURL: "ldaps://dc1.corp.example.com"}}
	for _, c := range []struct {
		name    string
		m       machineModel
		c       *clients.Clients
		errPath string
		warn    bool
	}{
		{"fine", machine("corp.example.com", "OU=K8s,DC=corp,DC=example,DC=com"), joins, "", false},
		{"OU elsewhere", machine("corp.example.com", "OU=K8s,DC=other,DC=com"), joins, "active_directory.ou", false},
		{"not a DNS name", machine("corp", ""), joins, "active_directory.domain", false},
		{"no join account", machine("corp.example.com", ""), &clients.Clients{}, "active_directory", false},
		{"accounts stay", machine("corp.example.com", ""), &clients.Clients{ADConfig: addirectory.Config{JoinUser: "svc", JoinPassword: "p"}}, "", true},
	} {
		var diags diag.Diagnostics
		planActiveDirectory(ctx, c.c, c.m, "windows_node win-0", &diags)
		var errs []string
		for _, d := range diags.Errors() {
			if p, ok := d.(diag.DiagnosticWithPath); ok {
				errs = append(errs, p.Path().String())
			}
		}
		if got := strings.Join(errs, ","); got != c.errPath {
			t.Errorf("%s: errors at %q, want %q (%v)", c.name, got, c.errPath, diags)
		}
		if got := diags.WarningsCount() > 0; got != c.warn {
			t.Errorf("%s: warning %v, want %v (%v)", c.name, got, c.warn, diags)
		}
	}
	var diags diag.Diagnostics
	planActiveDirectory(ctx, joins, machineModel{ActiveDirectory: types.ObjectNull(adTypes)}, "x", &diags)
	if diags.HasError() || diags.WarningsCount() > 0 {
		t.Errorf("without active_directory: %v", diags)
	}
}
