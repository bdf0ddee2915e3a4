package resources

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/wincluster/terraform-provider-windows/internal/addirectory"
	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// A node's active_directory: the domain and OU are the resource's, the join
// account the provider's (internal/addirectory says why).

// planActiveDirectory refuses, at plan, a domain or an OU that cannot be
// right and a join without the provider's join account, and warns when
// destroyed nodes' accounts would stay in the domain.
func planActiveDirectory(ctx context.Context, c *clients.Clients, m machineModel, what string, diags *diag.Diagnostics) {
	ad := m.activeDirectory(ctx, diags)
	if ad == nil || ad.Domain.IsUnknown() || ad.OU.IsUnknown() {
		return
	}
	if field, msg := addirectory.ValidateDomain(ad.Domain.ValueString(), ad.OU.ValueString()); field != "" {
		diags.AddAttributeError(path.Root("active_directory").AtName(field), "Invalid active_directory."+field, msg)
		return
	}
	if c == nil {
		return
	}
	if c.ADConfig.JoinUser == "" || c.ADConfig.JoinPassword == "" {
		diags.AddAttributeError(path.Root("active_directory"), "No Active Directory join account",
			fmt.Sprintf("%s joins %s, but %v.", what, ad.Domain.ValueString(), addirectory.ErrNoJoinAccount))
		return
	}
	if c.ADConfig.LDAPURL == "" {
		diags.AddAttributeWarning(path.Root("active_directory"), "Computer accounts stay in the domain on destroy",
			fmt.Sprintf("The provider has no active_directory.ldap_url, so destroying %s leaves its computer accounts in %s. "+
				"Set ldap_url (WINDOWS_AD_LDAP_URL) to a domain controller, or remove them by hand (Remove-ADComputer).", what, ad.Domain.ValueString()))
	}
}

// withJoinAccount gives a spec that joins a domain the provider's join
// account.
func withJoinAccount(spec *winnode.Spec, c *clients.Clients, diags *diag.Diagnostics) {
	if spec.Domain == nil || c == nil {
		return
	}
	if c.ADConfig.JoinUser == "" || c.ADConfig.JoinPassword == "" {
		diags.AddAttributeError(path.Root("active_directory"), "No Active Directory join account", addirectory.ErrNoJoinAccount.Error())
		return
	}
	spec.Domain.User, spec.Domain.Password = c.ADConfig.JoinUser, c.ADConfig.JoinPassword
}

// removeComputerAccounts makes the manager delete destroyed nodes' computer
// accounts from the domain the state says they joined, when the provider
// can reach a domain controller: only a node's own account (in its OU,
// created by the join account), so that destroying a node whose join failed
// on a name clash leaves the other computer's account alone. The function it
// returns, called once the operation is over, warns of each account of a
// destroyed node's name that it kept (members may be destroyed in
// parallel, so the reasons are collected first).
func removeComputerAccounts(ctx context.Context, m *winnode.Manager, c *clients.Clients, state machineModel, diags *diag.Diagnostics) (warnKept func()) {
	ad := state.activeDirectory(ctx, diags)
	if m == nil || c == nil || ad == nil || c.ADConfig.LDAPURL == "" {
		return func() {}
	}
	cfg, domain, ou := c.ADConfig, ad.Domain.ValueString(), ad.OU.ValueString()
	var mu sync.Mutex
	var kept []string
	m.RemoveComputerAccount = func(ctx context.Context, name string) (bool, error) {
		d, err := addirectory.DeleteComputer(ctx, cfg, domain, ou, name)
		if d.Kept != "" {
			// A node whose join failed on a name clash: the account is
			// another computer's, never this node's to delete.
			tflog.Warn(ctx, "computer account of the node's name kept", map[string]any{"computer": name, "reason": d.Kept})
			mu.Lock()
			kept = append(kept, d.Kept)
			mu.Unlock()
		}
		return d.Deleted, err
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for _, reason := range kept {
			diags.AddWarning("Computer account kept in the domain",
				"The destroyed node's name has a computer account that is not the node's own, so it was not deleted: "+reason+
					". It belongs to whichever computer or administrator created it; the guide \"Active Directory: domain-joined Windows nodes\" says how to resolve a name clash.")
		}
	}
}
