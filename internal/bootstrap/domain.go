package bootstrap

import "fmt"

// NetSetupLog is where Windows logs its domain joins (NetJoinDomain), the
// unattended join of Setup's specialize pass among them.
const NetSetupLog = `C:\Windows\debug\NetSetup.LOG`

// DomainJoinError is a Win32 error a domain join fails with, as Windows
// words it, and what to change.
type DomainJoinError struct{ Code, Text string }

// DomainJoinErrors are the errors Windows reports for the join's usual
// failures (Microsoft Learn, System Error Codes; lmerr.h; KB5020276), each
// naming the windows_node or windows_node_pool setting to check.
var DomainJoinErrors = []DomainJoinError{
	{"0x52e", "The user name or password is incorrect. (ERROR_LOGON_FAILURE, 1326): check the provider's active_directory.join_user and active_directory.join_password"},
	{"0x54b", "The specified domain either does not exist or could not be contacted. (ERROR_NO_SUCH_DOMAIN, 1355): check active_directory.domain and that the node's DNS servers resolve the domain's controllers"},
	{"0x2", "The system cannot find the file specified. (ERROR_FILE_NOT_FOUND, 2: the OU does not exist): check active_directory.ou"},
	{"0x5", "Access is denied. (ERROR_ACCESS_DENIED, 5): the provider's active_directory.join_user may not create computer objects in the node's active_directory.ou; delegate it Create Computer objects there"},
	{"0x8b0", "The account already exists. (NERR_UserExists, 2224): a computer account of this node's name is in another OU than active_directory.ou; move or delete it"},
	{"0xaac", "An account with the same name exists in Active Directory. Re-using the account was blocked by security policy. (NERR_AccountReuseBlockedByPolicy, 2732, KB5020276): another account created this node's computer account; delete it, or join with the account that created it"},
	{"0x216d", "Your computer could not be joined to the domain. You have exceeded the maximum number of computer accounts you are allowed to create in this domain. (8557): delegate the provider's active_directory.join_user Create Computer objects on active_directory.ou"},
}

// DomainJoinedStep checks, on a node whose customization joined domain,
// that the join succeeded: Windows' unattended join fails without failing
// the customization, so its outcome is read on the guest.
func DomainJoinedStep(domain string) (Step, error) {
	if domain == "" {
		return Step{}, fmt.Errorf("domain-joined: no domain")
	}
	script, err := render("domain-joined", "domain-joined", map[string]any{"Domain": domain, "Log": NetSetupLog, "Errors": DomainJoinErrors})
	if err != nil {
		return Step{}, err
	}
	return Step{Name: "domain-joined", Script: script, Rerunnable: true}, nil
}
