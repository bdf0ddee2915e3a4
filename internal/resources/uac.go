package resources

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
)

// uacFix is how to give admin_user a full token over WinRM and SSH.
const uacFix = "Use the built-in Administrator account (RID 500, whatever it is named on the template), " +
	"or set LocalAccountTokenFilterPolicy = 1 (DWORD) under " +
	`HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\Policies\System on the template ` +
	"(Microsoft Learn: \"User Account Control and remote restrictions\")."

// isDefaultAdminUser reports whether user is the default admin_user.
func isDefaultAdminUser(user string) bool { return strings.EqualFold(user, bootstrap.DefaultAdminUser) }

// warnAdminUser warns at plan of an admin_user other than the default: UAC
// remote restrictions give another local administrator a filtered token
// over WinRM and SSH, and every step that needs an administrator fails.
func warnAdminUser(ctx context.Context, plan tfsdk.Plan, diags *diag.Diagnostics) {
	var user types.String
	diags.Append(plan.GetAttribute(ctx, path.Root("admin_user"), &user)...)
	if user.IsNull() || user.IsUnknown() || isDefaultAdminUser(user.ValueString()) {
		return
	}
	diags.AddAttributeWarning(path.Root("admin_user"), "admin_user may be refused administrative work (UAC remote restrictions)",
		"admin_user is "+user.ValueString()+", not "+bootstrap.DefaultAdminUser+". Windows gives a local administrator other than "+
			"the built-in Administrator a filtered, non-elevated token when it logs on over WinRM or SSH, unless "+
			"LocalAccountTokenFilterPolicy is 1, and the bootstrap steps then fail with \"Access is denied\". "+
			"If "+user.ValueString()+" is the built-in Administrator renamed, ignore this warning. Otherwise: "+uacFix)
}

// accessDeniedEvidence are what a refused administrative operation prints
// on Windows (winsim's doc.go lists them).
var accessDeniedEvidence = []string{"Access is denied", "is denied.", "Requested registry access is not allowed", "0x80070005", "requires elevation"}

// uacCause names UAC remote restrictions as the likely cause of err when a
// step failed with access denied for an admin_user other than the default;
// "" otherwise.
func uacCause(user string, err error) string {
	var se *guest.StageError
	if isDefaultAdminUser(user) || !errors.As(err, &se) {
		return ""
	}
	text := se.Evidence
	if se.Err != nil {
		text += se.Err.Error()
	}
	for _, e := range accessDeniedEvidence {
		if strings.Contains(text, e) {
			return "\n\nCause: access denied to admin_user " + user + ", most likely UAC remote restrictions: a local administrator " +
				"other than the built-in Administrator gets a filtered, non-elevated token over WinRM and SSH. " + uacFix
		}
	}
	return ""
}
