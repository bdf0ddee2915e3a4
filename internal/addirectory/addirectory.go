// Package addirectory is what the provider does with an Active Directory
// domain itself, outside the guests: it checks the nodes' domain settings
// at plan and removes a destroyed node's computer account.
//
// Why the provider removes the account itself: the join (vCenter's guest
// customization, Windows' unattended join) creates the account, but nothing
// in a VM's destroy removes it. Remove-Computer in the guest only disables
// the account (NetUnjoinDomain without NETSETUP_ACCT_DELETE; Microsoft
// Learn, Remove-Computer: "When you remove a computer from a domain,
// Remove-Computer also disables the domain account"), and needs domain
// credentials in the guest at destroy. Left behind, a stale account of a
// node's name blocks the next node of that name unless the same join
// account created it (KB5020276). So the provider deletes the account over
// LDAP, as Remove-ADComputer does, with the join account, delegated
// "Delete Computer objects" on the nodes' OU (Microsoft Learn, "Delegate
// permissions to join computers to a domain"). The credentials come from the
// provider's configuration, never from a resource's state: a write-only
// attribute would not reach a destroy.
package addirectory

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// Config is the provider's active_directory block.
type Config struct {
	// JoinUser and JoinPassword are the join account: user, DOMAIN\user or
	// user@domain.
	JoinUser, JoinPassword string
	// LDAPURL is where the provider reaches a domain controller to remove
	// computer accounts: ldaps://dc.example.com (or ldap:// where the
	// controller accepts simple binds without TLS, as a lab's may). Empty:
	// accounts are left in the domain on destroy.
	LDAPURL string
	// CAFile verifies the controller's LDAPS certificate (PEM); empty: the
	// system's roots.
	CAFile string
}

// ErrNoJoinAccount is returned when a node asks to join a domain and the
// provider has no join account.
var ErrNoJoinAccount = errors.New("no join account: set the provider's active_directory.join_user and active_directory.join_password (or WINDOWS_AD_JOIN_USER and WINDOWS_AD_JOIN_PASSWORD)")

// ValidateDomain checks a domain's DNS name and an OU's DN in it.
func ValidateDomain(domain, ou string) (field, msg string) {
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return "domain", fmt.Sprintf("%q is not an Active Directory domain's DNS name, such as corp.example.com", domain)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.ContainsAny(l, " \\/,=") {
			return "domain", fmt.Sprintf("%q is not a DNS name: label %q", domain, l)
		}
	}
	if ou == "" {
		return "", ""
	}
	dn, err := ldap.ParseDN(ou)
	if err != nil {
		return "ou", fmt.Sprintf("%q is not a distinguished name (%v); write the OU as OU=Kubernetes Nodes,DC=corp,DC=example,DC=com", ou, err)
	}
	if len(dn.RDNs) == 0 || !strings.EqualFold(dn.RDNs[0].Attributes[0].Type, "OU") {
		return "ou", fmt.Sprintf("%q does not name an organizational unit: its first component must be OU=...", ou)
	}
	var dcs []string
	for _, r := range dn.RDNs {
		if strings.EqualFold(r.Attributes[0].Type, "DC") {
			dcs = append(dcs, r.Attributes[0].Value)
		}
	}
	if !strings.EqualFold(strings.Join(dcs, "."), domain) {
		return "ou", fmt.Sprintf("%q is not in the domain %s: its DC= components must be %s", ou, domain, baseDN(domain))
	}
	return "", ""
}

func baseDN(domain string) string {
	labels := strings.Split(domain, ".")
	for i, l := range labels {
		labels[i] = "DC=" + l
	}
	return strings.Join(labels, ",")
}

// bindName is the join account as a bind name: a bare user is the domain's.
func bindName(user, domain string) string {
	if strings.ContainsAny(user, `\@`) {
		return user
	}
	return user + "@" + domain
}

// DeleteComputer deletes the computer account computerName (without $) of
// domain, as Remove-ADComputer does, when it is the node's own: in the
// node's container (ou, or the domain's CN=Computers when empty) and, where
// the directory records its creator (mS-DS-CreatorSID), created by the join
// account. An account of the node's name that is not its own is another
// computer's (a name clash: NERR_UserExists 2224 for one in another
// container, NERR_AccountReuseBlockedByPolicy 2732 for one another account
// created, KB5020276) and the node never joined with it, so it stays: the
// result's Kept says why. A missing account is no error.
func DeleteComputer(ctx context.Context, cfg Config, domain, ou, computerName string) (Deletion, error) {
	if cfg.LDAPURL == "" {
		return Deletion{}, errors.New("no domain controller to reach: set the provider's active_directory.ldap_url")
	}
	u, err := url.Parse(cfg.LDAPURL)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
		return Deletion{}, fmt.Errorf("active_directory.ldap_url %q: want ldaps://host[:port] (or ldap://)", cfg.LDAPURL)
	}
	opts := []ldap.DialOpt{}
	if u.Scheme == "ldaps" {
		tc := &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return Deletion{}, fmt.Errorf("active_directory.ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return Deletion{}, fmt.Errorf("active_directory.ca_file %s holds no PEM certificate", cfg.CAFile)
			}
			tc.RootCAs = pool
		}
		opts = append(opts, ldap.DialWithTLSConfig(tc))
	}
	conn, err := ldap.DialURL(cfg.LDAPURL, opts...)
	if err != nil {
		var unknownCA x509.UnknownAuthorityError
		var badName x509.HostnameError
		switch {
		case errors.As(err, &unknownCA):
			return Deletion{}, fmt.Errorf("the domain controller at %s has an LDAPS certificate from a CA the provider does not trust: set active_directory.ca_file to the CA's certificate (PEM): %w", cfg.LDAPURL, err)
		case errors.As(err, &badName):
			return Deletion{}, fmt.Errorf("the domain controller's LDAPS certificate does not name %s: set active_directory.ldap_url to a name its certificate holds: %w", u.Hostname(), err)
		}
		return Deletion{}, fmt.Errorf("reaching the domain controller at %s: %w", cfg.LDAPURL, err)
	}
	defer func() { _ = conn.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetTimeout(timeUntil(dl))
	}
	if err := conn.Bind(bindName(cfg.JoinUser, domain), cfg.JoinPassword); err != nil {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			return Deletion{}, fmt.Errorf("the domain controller refused the join account %s (check the provider's active_directory.join_user and active_directory.join_password): %w", cfg.JoinUser, err)
		}
		return Deletion{}, fmt.Errorf("binding to %s: %w", cfg.LDAPURL, err)
	}
	base := baseDN(domain)
	name := strings.ToUpper(computerName)
	res, err := conn.Search(ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(&(objectClass=computer)(sAMAccountName="+ldap.EscapeFilter(name+"$")+"))", []string{"distinguishedName", "mS-DS-CreatorSID"}, nil))
	if err != nil {
		return Deletion{}, fmt.Errorf("finding the computer account %s$: %w", name, err)
	}
	if len(res.Entries) == 0 {
		return Deletion{}, nil
	}
	acct := res.Entries[0]
	dn := acct.DN
	container := ou
	if container == "" {
		container = "CN=Computers," + base
	}
	if !sameDN(parentOf(dn), container) {
		return Deletion{DN: dn, Kept: fmt.Sprintf("%s is not in the node's container %s: another computer's account of the same name (a name clash, NERR_UserExists), which the node never joined with", dn, container)}, nil
	}
	if creator := acct.GetRawAttributeValue("mS-DS-CreatorSID"); len(creator) > 0 {
		sid, err := joinAccountSID(conn, base, cfg.JoinUser)
		if err != nil {
			return Deletion{}, err
		}
		if string(sid) != string(creator) {
			return Deletion{DN: dn, Kept: fmt.Sprintf("%s was created by another account than the join account %s: another computer's account of the same name (a name clash, NERR_AccountReuseBlockedByPolicy, KB5020276), which the node never joined with", dn, cfg.JoinUser)}, nil
		}
	}
	if err := conn.Del(ldap.NewDelRequest(dn, nil)); err != nil {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInsufficientAccessRights) {
			return Deletion{}, fmt.Errorf("deleting %s: the join account %s may not delete computer objects there; delegate it Delete Computer objects on the OU, or delete the account by hand (Remove-ADComputer): %w", dn, cfg.JoinUser, err)
		}
		return Deletion{}, fmt.Errorf("deleting %s: %w", dn, err)
	}
	return Deletion{DN: dn, Deleted: true}, nil
}

// Deletion is what DeleteComputer did: the account it found (DN), whether
// it deleted it, and, when it kept it, why.
type Deletion struct {
	DN      string
	Deleted bool
	Kept    string
}

// joinAccountSID is the join account's objectSid, as the directory returns
// it (compared as raw bytes with an account's mS-DS-CreatorSID).
func joinAccountSID(conn *ldap.Conn, base, user string) ([]byte, error) {
	sam := user
	if _, u, ok := strings.Cut(user, `\`); ok {
		sam = u
	} else if u, _, ok := strings.Cut(user, "@"); ok {
		sam = u
	}
	res, err := conn.Search(ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(&(objectClass=user)(sAMAccountName="+ldap.EscapeFilter(sam)+"))", []string{"objectSid"}, nil))
	if err != nil {
		return nil, fmt.Errorf("finding the join account %s: %w", user, err)
	}
	if len(res.Entries) == 0 {
		return nil, fmt.Errorf("the join account %s is not in the directory", user)
	}
	return res.Entries[0].GetRawAttributeValue("objectSid"), nil
}

// parentOf is a DN's parent: the DN without its first RDN.
func parentOf(dn string) string {
	d, err := ldap.ParseDN(dn)
	if err != nil || len(d.RDNs) == 0 {
		return ""
	}
	return (&ldap.DN{RDNs: d.RDNs[1:]}).String()
}

// sameDN compares two DNs as the directory does (case and spacing aside).
func sameDN(a, b string) bool {
	da, err1 := ldap.ParseDN(a)
	db, err2 := ldap.ParseDN(b)
	return err1 == nil && err2 == nil && da.EqualFold(db)
}
