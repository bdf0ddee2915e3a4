// Package addomain is the sandbox's Active Directory domain: one domain
// controller the simulated guests reach over LDAP, holding the directory (the
// domain's naming context, its containers and OUs, users, groups with members,
// computer accounts), and the client side of a domain join as Windows runs it.
//
// The controller is a real LDAP server (github.com/jimlambrt/gldap, HashiCorp's
// LDAP server library) and the joining guest a real LDAP client
// (github.com/go-ldap/ldap/v3): a join binds, searches and adds over the wire,
// and the directory refuses what Active Directory refuses, with AD's result
// codes and the diagnostic text AD puts beside them. Nothing accepts a join it
// cannot judge.
//
// What it models, and from where:
//
//   - Binds: simple binds by DN, DOMAIN\user or user@dns.domain. A wrong
//     password or an unknown user is invalidCredentials (49) with AD's
//     "80090308: LdapErr: DSID-0C09041C, comment: AcceptSecurityContext error,
//     data 52e" (data 525: user not found, 533: account disabled), as
//     Microsoft Learn's "LDAP bind errors" table gives them
//     (https://learn.microsoft.com/en-us/troubleshoot/windows-server/active-directory/ldap-bind-error-codes
//     lists 52e, 525, 533). An operation on a connection that has not bound is
//     AD's operationsError "000004DC: LdapErr: DSID-0C090A5C, comment: In order
//     to perform this operation a successful bind must be completed on the
//     connection".
//   - Search with base, one-level and subtree scopes and the filters a join and
//     the gMSA checks use (and, or, not, equality, presence, substrings);
//     others are refused (unwillingToPerform) as not modelled. A missing base
//     is noSuchObject (32).
//   - Adding a computer object: into a container or OU that exists (else
//     noSuchObject), by a user delegated "Create Computer objects" on it
//     (Microsoft Learn, "Delegate permissions to join computers to a domain"
//     / the OU's ACL) or, in CN=Computers, by any authenticated user within
//     ms-DS-MachineAccountQuota (10 by default: Microsoft Learn, "Default
//     limit to number of workstations a user can join to the domain"), or by
//     Domain Admins anywhere. The controller stamps objectSid and
//     mS-DS-CreatorSID (the creating user's SID) itself, as AD does.
//   - Deleting a computer object: Domain Admins, or a user delegated "Delete
//     Computer objects" on its OU. A creator who joined through the quota
//     cannot delete it (AD gives the quota's creator no delete right).
//   - Modify of a computer account (its password, userAccountControl,
//     dNSHostName) by its creator, a delegated user or Domain Admins.
//
// The join (Join, the client side of NetJoinDomain as Windows' unattended
// join, Microsoft-Windows-UnattendedJoin, and Add-Computer run it), with the
// Win32 error each failure surfaces as, each checked against Microsoft Learn's
// system error codes (https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes)
// and network management error codes (lmerr.h):
//
//   - no controller for the domain, or one that does not answer: 1355
//     ERROR_NO_SUCH_DOMAIN "The specified domain either does not exist or
//     could not be contacted." (the DC locator finds no DC);
//   - a refused bind: 1326 ERROR_LOGON_FAILURE "The user name or password is
//     incorrect.";
//   - an OU (MachineObjectOU) that does not exist: 2 ERROR_FILE_NOT_FOUND "The
//     system cannot find the file specified." (what Add-Computer -OUPath and
//     the unattended join report for a missing OU: ansible/ansible#57313,
//     Azure/azure-devtestlab#667);
//   - an account of the computer's name in another container than the one
//     asked for: 2224 NERR_UserExists "The account already exists.";
//   - an account of the computer's name the joining user did not create
//     (and a creator who is not a Domain Admin): 2732
//     NERR_AccountReuseBlockedByPolicy "An account with the same name exists
//     in Active Directory. Re-using the account was blocked by security
//     policy." (KB5020276, Windows' domain join hardening since October 2022;
//     Microsoft Learn, "Failure when you use an existing computer account to
//     join a domain");
//   - otherwise an account the same user created is reused (its password
//     reset, enabled again): a VM reset and rejoined keeps its account.
//
// Unjoin (Remove-Computer's NetUnjoinDomain without NETSETUP_ACCT_DELETE)
// disables the account (userAccountControl ACCOUNTDISABLE) and keeps it;
// DeleteComputer deletes it, as Remove-ADComputer does, with the rights above.
//
// LDAPS (Options.LDAPSAddr): the same directory over TLS with the
// certificate the caller gives, as a controller with a server-authentication
// certificate serves it on port 636 (Microsoft Learn, "Enable LDAP over SSL
// with a third-party certification authority"); gldap's TLS listener.
//
// Not modelled: Kerberos, NTLM and SASL binds (a join uses them; the sandbox
// binds simply over its loopback), DNS SRV records (Locator stands in for
// the DC locator), replication, and SIDs in binary form: objectSid and
// mS-DS-CreatorSID hold the SID's string form (S-1-5-21-...).
package addomain
