package addomain

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// Locator finds a domain's controller, as Windows' DC locator does through
// DNS (_ldap._tcp.dc._msdcs.<domain>): the address, or false when the domain
// has none.
type Locator interface {
	Locate(domain string) (addr string, ok bool)
}

// Locators is a Locator of the controllers it holds, by domain.
type Locators map[string]*Controller

// Locate answers the controller of domain, if it serves.
func (l Locators) Locate(domain string) (string, bool) {
	c, ok := l[strings.ToLower(domain)]
	if !ok || c == nil || len(c.fronts) == 0 {
		return "", false
	}
	return c.Addr(), true
}

// JoinRequest is one computer's join, as NetJoinDomain takes it from the
// unattend file's Microsoft-Windows-UnattendedJoin | Identification
// (JoinDomain, MachineObjectOU, Credentials) or from Add-Computer.
type JoinRequest struct {
	Domain       string // the domain's DNS name
	OU           string // MachineObjectOU; empty: the domain's Computers container
	User         string // the join account: user, DOMAIN\user or user@domain
	Password     string
	ComputerName string
	// Log, when set, receives NetSetup.LOG's lines as Windows writes them
	// (C:\Windows\debug\NetSetup.LOG); the password is never in them, as
	// Windows writes "lpPassword: (non-null)".
	Log func(line string)
}

// Win32 errors of a join (see doc.go for each one's source).
const (
	ErrorFileNotFound        = 2
	ErrorAccessDenied        = 5
	ErrorLogonFailure        = 1326
	ErrorNoSuchDomain        = 1355
	NerrUserExists           = 2224
	NerrAccountReuseBlocked  = 2732
	ErrorMachineAccountQuota = 8557
)

var joinErrorTexts = map[uint32]string{
	ErrorFileNotFound:        "The system cannot find the file specified.",
	ErrorAccessDenied:        "Access is denied.",
	ErrorLogonFailure:        "The user name or password is incorrect.",
	ErrorNoSuchDomain:        "The specified domain either does not exist or could not be contacted.",
	NerrUserExists:           "The account already exists.",
	NerrAccountReuseBlocked:  "An account with the same name exists in Active Directory. Re-using the account was blocked by security policy.",
	ErrorMachineAccountQuota: "Your computer could not be joined to the domain. You have exceeded the maximum number of computer accounts you are allowed to create in this domain. Contact your system administrator to have this limit reset or increased.",
}

// JoinError is a join Windows refuses: its Win32 error code and text.
type JoinError struct {
	Code uint32
	Text string
	// Detail is what the controller said, for NetSetup.LOG.
	Detail string
}

func (e *JoinError) Error() string { return fmt.Sprintf("%s (0x%x)", e.Text, e.Code) }

func joinErr(code uint32, detail string) *JoinError {
	return &JoinError{Code: code, Text: joinErrorTexts[code], Detail: detail}
}

// baseDNOf is the naming context's DN of a domain's DNS name.
func baseDNOf(domain string) string {
	labels := strings.Split(strings.ToLower(domain), ".")
	for i, l := range labels {
		labels[i] = "DC=" + l
	}
	return strings.Join(labels, ",")
}

// bindName is the name a join binds with: DOMAIN\user and user@domain as
// given, a bare user name in the joined domain.
func bindName(user, domain string) string {
	if strings.ContainsAny(user, `\@`) {
		return user
	}
	return user + "@" + domain
}

// session is an LDAP connection to the domain's controller, bound as the
// join account.
type session struct {
	conn *ldap.Conn
	base string
	log  func(string)
}

func (s *session) logf(format string, args ...any) {
	if s.log != nil {
		s.log(fmt.Sprintf(format, args...))
	}
}

// connect finds the controller and binds: 1355 when there is none or it does
// not answer, 1326 when it refuses the credentials.
func connect(ctx context.Context, loc Locator, domain, user, password string, log func(string)) (*session, error) {
	s := &session{base: baseDNOf(domain), log: log}
	addr, ok := loc.Locate(domain)
	if !ok {
		s.logf("NetpDsGetDcName: failed to find a DC in the specified domain: 0x54b, last error is 0x0")
		return nil, joinErr(ErrorNoSuchDomain, "no domain controller found for "+domain)
	}
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		s.logf("NetpDsGetDcName: failed to find a DC in the specified domain: 0x54b, last error is 0x0")
		return nil, joinErr(ErrorNoSuchDomain, err.Error())
	}
	conn := ldap.NewConn(raw, false)
	conn.Start()
	s.conn = conn
	s.logf("NetpDsGetDcName: status of verifying DNS A record name resolution for '%s': 0x0", addr)
	if err := conn.Bind(bindName(user, domain), password); err != nil {
		_ = conn.Close()
		s.logf("NetpJoinDomainOnDs: status of connecting to dc: 0x52e")
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			return nil, joinErr(ErrorLogonFailure, err.Error())
		}
		return nil, joinErr(ErrorNoSuchDomain, err.Error())
	}
	s.logf("NetpLdapBind: Verified minimum encryption strength on %s: 0x0", addr)
	return s, nil
}

func (s *session) close() { _ = s.conn.Close() }

// find returns the entries of a search; a missing base is (nil, false, nil).
func (s *session) find(base string, scope int, filter string, attrs ...string) ([]*ldap.Entry, bool, error) {
	res, err := s.conn.Search(ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, 0, 0, false, filter, attrs, nil))
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return res.Entries, true, nil
}

// account finds the computer's account (NAME$) in the domain.
func (s *session) account(name string) (*ldap.Entry, error) {
	es, _, err := s.find(s.base, ldap.ScopeWholeSubtree, "(sAMAccountName="+ldap.EscapeFilter(strings.ToUpper(name)+"$")+")",
		"distinguishedName", "mS-DS-CreatorSID", "userAccountControl")
	if err != nil || len(es) == 0 {
		return nil, err
	}
	return es[0], nil
}

// self is the bound join account's object.
func (s *session) self(user string) (*ldap.Entry, error) {
	sam := user
	if _, u, ok := strings.Cut(user, `\`); ok {
		sam = u
	} else if u, _, ok := strings.Cut(user, "@"); ok {
		sam = u
	}
	es, _, err := s.find(s.base, ldap.ScopeWholeSubtree, "(&(objectClass=user)(sAMAccountName="+ldap.EscapeFilter(sam)+"))", "distinguishedName", "objectSid")
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("the join account %s is not in the directory", user)
	}
	return es[0], nil
}

// domainAdmin reports whether the object dn is in Domain Admins.
func (s *session) domainAdmin(dn string) (bool, error) {
	es, _, err := s.find("CN=Domain Admins,CN=Users,"+s.base, ldap.ScopeBaseObject, "(member="+ldap.EscapeFilter(dn)+")", "cn")
	return len(es) > 0, err
}

func machinePassword() string {
	b := make([]byte, 60)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func writeErr(err error, s *session) error {
	var le *ldap.Error
	if errors.As(err, &le) {
		switch le.ResultCode {
		case ldap.LDAPResultInsufficientAccessRights:
			return joinErr(ErrorAccessDenied, le.Error())
		case ldap.LDAPResultAdminLimitExceeded:
			return joinErr(ErrorMachineAccountQuota, le.Error())
		case ldap.LDAPResultNoSuchObject:
			return joinErr(ErrorFileNotFound, le.Error())
		case ldap.LDAPResultEntryAlreadyExists:
			return joinErr(NerrUserExists, le.Error())
		}
	}
	return err
}

// Join joins a computer to the domain as NetJoinDomain does with
// NETSETUP_JOIN_DOMAIN | NETSETUP_ACCT_CREATE (the unattended join's and
// Add-Computer's flags): it returns the account's DN, or a *JoinError with
// the Win32 error Windows reports.
func Join(ctx context.Context, loc Locator, req JoinRequest) (string, error) {
	log := req.Log
	if log != nil {
		log("NetpDoDomainJoin")
		log("NetpDoDomainJoin: using current computer names")
		log("NetpProvisionComputerAccount:")
		log("\tlpDomain: " + req.Domain)
		log("\tlpHostName: " + strings.ToLower(req.ComputerName))
		ou := req.OU
		if ou == "" {
			ou = "(NULL)"
		}
		log("\tlpMachineAccountOU: " + ou)
		log("\tlpAccount: " + req.User)
		log("\tlpPassword: (non-null)")
	}
	dn, err := join(ctx, loc, req)
	if log != nil {
		var je *JoinError
		switch {
		case err == nil:
			log("NetpDoDomainJoin: status: 0x0")
		case errors.As(err, &je):
			log(fmt.Sprintf("NetpDoDomainJoin: status: 0x%x", je.Code))
		default:
			log("NetpDoDomainJoin: status: " + err.Error())
		}
	}
	return dn, err
}

func join(ctx context.Context, loc Locator, req JoinRequest) (string, error) {
	s, err := connect(ctx, loc, req.Domain, req.User, req.Password, req.Log)
	if err != nil {
		return "", err
	}
	defer s.close()
	container := req.OU
	if container == "" {
		container = "CN=Computers," + s.base
	}
	if _, ok, err := s.find(container, ldap.ScopeBaseObject, "(objectClass=*)", "distinguishedName"); err != nil {
		return "", err
	} else if !ok {
		s.logf("NetpCreateComputerObjectInDs: NetpGetComputerObjectDn failed: 0x2")
		return "", joinErr(ErrorFileNotFound, "no such OU: "+container)
	}
	name := strings.ToUpper(req.ComputerName)
	host := strings.ToLower(req.ComputerName) + "." + strings.ToLower(req.Domain)
	existing, err := s.account(name)
	if err != nil {
		return "", err
	}
	if existing == nil {
		dn := "CN=" + name + "," + container
		add := ldap.NewAddRequest(dn, nil)
		add.Attribute("objectClass", []string{"top", "person", "organizationalPerson", "user", "computer"})
		add.Attribute("sAMAccountName", []string{name + "$"})
		add.Attribute("dNSHostName", []string{host})
		add.Attribute("userAccountControl", []string{strconv.Itoa(uacWorkstationTrust)})
		add.Attribute("unicodePwd", []string{machinePassword()})
		if err := s.conn.Add(add); err != nil {
			s.logf("NetpCreateComputerObjectInDs: ldap_add_s failed: %v", err)
			return "", writeErr(err, s)
		}
		s.logf("NetpCreateComputerObjectInDs: Account created: %s", dn)
		return dn, nil
	}
	dn := existing.GetAttributeValue("distinguishedName")
	s.logf("NetpGetComputerObjectDn: Crack results: (Account already exists) DN = %s", dn)
	if !strings.EqualFold(normDN(parentDN(dn)), normDN(container)) {
		// The account is elsewhere than the OU asked for: NetJoinDomain
		// does not move it.
		return "", joinErr(NerrUserExists, "the account is "+dn)
	}
	// KB5020276: reuse only by the account's creator, or an account a
	// Domain Admin created, or by a Domain Admin.
	me, err := s.self(req.User)
	if err != nil {
		return "", err
	}
	creator := existing.GetAttributeValue("mS-DS-CreatorSID")
	allowed := creator != "" && creator == me.GetAttributeValue("objectSid")
	if !allowed {
		if allowed, err = s.domainAdmin(me.DN); err != nil {
			return "", err
		}
	}
	if !allowed && creator != "" {
		es, _, err := s.find(s.base, ldap.ScopeWholeSubtree, "(objectSid="+ldap.EscapeFilter(creator)+")", "distinguishedName")
		if err != nil {
			return "", err
		}
		if len(es) > 0 {
			if allowed, err = s.domainAdmin(es[0].DN); err != nil {
				return "", err
			}
		}
	}
	if !allowed {
		s.logf("NetpManageMachineAccountWithSid: The computer account already exists in Active Directory. Re-using the account was blocked by security policy.")
		return "", joinErr(NerrAccountReuseBlocked, "the account "+dn+" was created by "+creator)
	}
	mod := ldap.NewModifyRequest(dn, nil)
	mod.Replace("unicodePwd", []string{machinePassword()})
	mod.Replace("userAccountControl", []string{strconv.Itoa(uacWorkstationTrust)})
	mod.Replace("dNSHostName", []string{host})
	if err := s.conn.Modify(mod); err != nil {
		return "", writeErr(err, s)
	}
	s.logf("NetpModifyComputerObjectInDs: Account reused: %s", dn)
	return dn, nil
}

// Unjoin is NetUnjoinDomain without NETSETUP_ACCT_DELETE (Remove-Computer
// with -UnjoinDomainCredential): the computer account is disabled and
// stays in the directory.
func Unjoin(ctx context.Context, loc Locator, domain, user, password, computerName string) error {
	s, err := connect(ctx, loc, domain, user, password, nil)
	if err != nil {
		return err
	}
	defer s.close()
	acct, err := s.account(computerName)
	if err != nil {
		return err
	}
	if acct == nil {
		return nil
	}
	uac, _ := strconv.Atoi(acct.GetAttributeValue("userAccountControl"))
	mod := ldap.NewModifyRequest(acct.DN, nil)
	mod.Replace("userAccountControl", []string{strconv.Itoa(uac | uacAccountDisable)})
	return writeErr(s.conn.Modify(mod), s)
}

// DeleteComputer deletes a computer's account as Remove-ADComputer does,
// with the given account's rights; a missing account is no error. It
// returns whether an account was deleted.
func DeleteComputer(ctx context.Context, loc Locator, domain, user, password, computerName string) (bool, error) {
	s, err := connect(ctx, loc, domain, user, password, nil)
	if err != nil {
		return false, err
	}
	defer s.close()
	acct, err := s.account(computerName)
	if err != nil || acct == nil {
		return false, err
	}
	if err := s.conn.Del(ldap.NewDelRequest(acct.DN, nil)); err != nil {
		return false, writeErr(err, s)
	}
	return true, nil
}
