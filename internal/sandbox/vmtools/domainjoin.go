package vmtools

import (
	"context"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// The domain join of a Windows customization, as Windows Setup runs it.
//
// Sources:
//   - vSphere API, CustomizationIdentification: joinDomain, domainAdmin,
//     domainAdminPassword and (vSphere API 8.0.2.0) domainOU, "transferred into
//     the sysprep.xml file"; they become Microsoft-Windows-UnattendedJoin |
//     Identification | JoinDomain, Credentials (Domain, Username, Password)
//     and MachineObjectOU, read in the specialize pass (Microsoft Learn,
//     Microsoft-Windows-UnattendedJoin; MachineObjectOU: "the LDAP X.500
//     distinguished name of the OU in which the computer account is created").
//   - The join is NetJoinDomain's (internal/sandbox/addomain.Join): it logs to
//     C:\Windows\debug\NetSetup.LOG, which shows "lpPassword: (non-null)"
//     rather than the password, and ends with "NetpDoDomainJoin: status:
//     0x<Win32 error>" (Microsoft Learn, "Failure when you use an existing
//     computer account to join a domain" quotes such a log).
//   - A failed unattended join does not fail Setup: the computer stays in its
//     workgroup, and vCenter reports the customization as succeeded
//     (vmware/terraform-provider-vsphere#1350, "join_domain on Windows server
//     not reporting a failure when failing to join the domain"). Whoever
//     asked for the join must read its outcome on the guest.
//   - Setup removes the sensitive data a pass consumed from its cached answer
//     file at the end of the pass (Microsoft Learn, "Windows Setup Automation
//     Overview", Sensitive data in answer files): the cached copy in
//     C:\Windows\Panther says *SENSITIVE*DATA*DELETED* for the join's
//     password; vCenter's C:\sysprep\sysprep.xml keeps it until someone
//     deletes it (the provider's first step after the customization does).

// NetSetupLog is where Windows logs its domain joins.
const NetSetupLog = `C:\Windows\debug\NetSetup.LOG`

// sensitiveDataDeleted is what Setup leaves of a consumed secret in its
// cached answer file.
const sensitiveDataDeleted = "*SENSITIVE*DATA*DELETED*"

// unattendedJoin joins the guest to the domain its customization names, if
// any, logging to NetSetup.LOG; a failed join is only logged, as Windows does.
func (h *Hosts) unattendedJoin(ctx context.Context, st *vmState, s *types.CustomizationSysprep) error {
	id := s.Identification
	if id.JoinDomain == "" {
		return nil
	}
	loc := h.opts.Domains
	if loc == nil {
		loc = addomain.Locators{}
	}
	password := ""
	if id.DomainAdminPassword != nil {
		password = id.DomainAdminPassword.Value
	}
	var lines []string
	stamp := func(l string) {
		lines = append(lines, time.Now().UTC().Format("01/02/2006 15:04:05:000")+" "+l)
	}
	user := id.DomainAdmin
	if !strings.ContainsAny(user, `\@`) {
		// Credentials/Domain is the joined domain: vCenter's domainAdmin
		// is the account's name in it.
		user = id.JoinDomain + `\` + user
	}
	dn, err := addomain.Join(ctx, loc, addomain.JoinRequest{
		Domain: id.JoinDomain, OU: id.DomainOU, User: user, Password: password, ComputerName: st.computer, Log: stamp,
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		h.logf("guests: %s: the unattended join of %s failed: %v", st.computer, id.JoinDomain, err)
	} else {
		h.logf("guests: %s joined %s as %s", st.computer, id.JoinDomain, dn)
	}
	if err := winsim.PlaceFile(st.dir, NetSetupLog, []byte(strings.Join(lines, "\r\n")+"\r\n"), true); err != nil {
		return err
	}
	// Setup scrubs the join's password from its cached answer file.
	scrubbed := *s
	scrubbed.Identification.DomainAdminPassword = &types.CustomizationPassword{Value: sensitiveDataDeleted, PlainText: true}
	answer, err := customizationAnswerFile(&scrubbed)
	if err != nil {
		return err
	}
	return winsim.PlaceFile(st.dir, winsim.PantherAnswerFile, answer, false)
}
