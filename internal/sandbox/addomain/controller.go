package addomain

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jimlambrt/gldap"
)

// Options configure a domain and its controller.
type Options struct {
	// Domain is the domain's DNS name (corp.example.test); NetBIOS its
	// NetBIOS name (CORP), by default the first label upper-cased.
	Domain, NetBIOS string
	// AdminPassword is the domain's Administrator's password (a member of
	// Domain Admins).
	AdminPassword string
	// Addr is the controller's listen address, 127.0.0.1:<port>; the caller
	// chooses the port (internal/sandbox/localport).
	Addr string
	// LDAPSAddr, when set, is where the controller also serves LDAP over
	// TLS (LDAPS, port 636 on a real controller) with TLS's certificate:
	// Active Directory serves LDAPS once a domain controller has a
	// certificate for server authentication whose subject names it
	// (Microsoft Learn, "Enable LDAP over SSL with a third-party
	// certification authority"). The directory is the same on both ports.
	LDAPSAddr string
	TLS       *tls.Config
}

// Controller is one running domain controller and its directory.
type Controller struct {
	dir       *directory
	addr      string
	ldapsAddr string
	fronts    []*frontend // LDAP, and LDAPS if served; nil once stopped
}

// frontend is one port the controller serves: gldap numbers a server's
// connections from 1, so each port keeps its own connections' binds.
type frontend struct {
	*Controller
	srv  *gldap.Server
	done chan error

	mu    sync.Mutex
	bound map[int]string // connection ID -> bound user's DN
}

// Start builds the domain's directory and serves it over LDAP at opts.Addr;
// it returns once the controller accepts connections.
func Start(opts Options) (*Controller, error) {
	if opts.Domain == "" || !strings.Contains(opts.Domain, ".") {
		return nil, fmt.Errorf("addomain: Domain %q must be a DNS name such as corp.example.test", opts.Domain)
	}
	if opts.NetBIOS == "" {
		opts.NetBIOS = strings.ToUpper(strings.Split(opts.Domain, ".")[0])
	}
	c := &Controller{dir: newDirectory(opts.Domain, opts.NetBIOS), addr: opts.Addr, ldapsAddr: opts.LDAPSAddr}
	if opts.AdminPassword != "" {
		if _, err := c.AddUser("CN=Users,"+c.dir.baseDN, "Administrator", opts.AdminPassword); err != nil {
			return nil, err
		}
		if err := c.AddMember("Domain Admins", "Administrator"); err != nil {
			return nil, err
		}
	}
	if err := c.serve(opts.Addr, nil); err != nil {
		return nil, err
	}
	if opts.LDAPSAddr != "" {
		if opts.TLS == nil {
			_ = c.Stop()
			return nil, errors.New("addomain: LDAPSAddr needs a TLS configuration with the controller's certificate")
		}
		if err := c.serve(opts.LDAPSAddr, opts.TLS); err != nil {
			_ = c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// serve starts a frontend at addr (over TLS when tc is set) and returns once
// it accepts connections.
func (c *Controller) serve(addr string, tc *tls.Config) error {
	f := &frontend{Controller: c, bound: map[int]string{}, done: make(chan error, 1)}
	srv, err := gldap.NewServer(gldap.WithLogger(hclog.New(&hclog.LoggerOptions{Output: io.Discard})), gldap.WithOnClose(f.forget),
		gldap.WithReadTimeout(time.Minute), gldap.WithWriteTimeout(time.Minute))
	if err != nil {
		return err
	}
	mux, err := gldap.NewMux()
	if err != nil {
		return err
	}
	for _, reg := range []error{mux.Bind(f.handleBind), mux.Search(f.handleSearch), mux.Add(f.handleAdd),
		mux.Modify(f.handleModify), mux.Delete(f.handleDelete), mux.Unbind(f.handleUnbind), mux.DefaultRoute(f.handleUnknown)} {
		if reg != nil {
			return reg
		}
	}
	if err := srv.Router(mux); err != nil {
		return err
	}
	f.srv = srv
	var runOpts []gldap.Option
	if tc != nil {
		runOpts = append(runOpts, gldap.WithTLSConfig(tc))
	}
	go func() { f.done <- srv.Run(addr, runOpts...) }()
	// Run listens before it serves; wait for the listener, or Run's error.
	for !srv.Ready() {
		select {
		case err := <-f.done:
			return fmt.Errorf("addomain: serving %s: %w", addr, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	c.fronts = append(c.fronts, f)
	return nil
}

// Stop stops serving; a join afterwards cannot reach the controller.
func (c *Controller) Stop() error {
	var errs []error
	for _, f := range c.fronts {
		errs = append(errs, f.srv.Stop())
	}
	c.fronts = nil
	return errors.Join(errs...)
}

// Addr is the controller's LDAP address (host:port).
func (c *Controller) Addr() string { return c.addr }

// LDAPSAddr is the controller's LDAPS address, "" when it serves none.
func (c *Controller) LDAPSAddr() string { return c.ldapsAddr }

// Domain is the domain's DNS name; NetBIOS its NetBIOS name; BaseDN its
// naming context's DN.
func (c *Controller) Domain() string  { return c.dir.dnsName }
func (c *Controller) NetBIOS() string { return c.dir.netbios }
func (c *Controller) BaseDN() string  { return c.dir.baseDN }

// ComputersContainer is where a join without an OU creates the account.
func (c *Controller) ComputersContainer() string { return "CN=Computers," + c.dir.baseDN }

func (c *frontend) forget(connID int) {
	c.mu.Lock()
	delete(c.bound, connID)
	c.mu.Unlock()
}

func (c *frontend) boundAs(connID int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bound[connID]
}

func (c *frontend) handleUnbind(_ *gldap.ResponseWriter, r *gldap.Request) {
	c.forget(r.ConnectionID())
}

func (c *frontend) handleUnknown(w *gldap.ResponseWriter, r *gldap.Request) {
	_ = w.Write(r.NewResponse(gldap.WithResponseCode(gldap.ResultUnwillingToPerform),
		gldap.WithDiagnosticMessage("sandbox: this LDAP operation is not modelled by the sandbox's domain controller")))
}

func (c *frontend) handleBind(w *gldap.ResponseWriter, r *gldap.Request) {
	resp := r.NewBindResponse(gldap.WithResponseCode(gldap.ResultInvalidCredentials))
	defer func() { _ = w.Write(resp) }()
	m, err := r.GetSimpleBindMessage()
	if err != nil || m.AuthChoice != gldap.SimpleAuthChoice {
		resp.SetResultCode(gldap.ResultAuthMethodNotSupported)
		resp.SetDiagnosticMessage("sandbox: only simple binds are modelled")
		return
	}
	c.forget(r.ConnectionID())
	if m.UserName == "" && m.Password == "" {
		resp.SetResultCode(gldap.ResultSuccess) // anonymous: allowed, but nothing else is
		return
	}
	dn, code, data := c.dir.authenticate(m.UserName, string(m.Password))
	if code != gldap.ResultSuccess {
		resp.SetDiagnosticMessage("80090308: LdapErr: DSID-0C09041C, comment: AcceptSecurityContext error, data " + data + ", v4563")
		return
	}
	c.mu.Lock()
	c.bound[r.ConnectionID()] = dn
	c.mu.Unlock()
	resp.SetResultCode(gldap.ResultSuccess)
}

// authenticate checks a simple bind: the result code and AD's data value.
func (d *directory) authenticate(name, password string) (string, int, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	u := d.resolveUser(name)
	if u == nil {
		return "", gldap.ResultInvalidCredentials, "525"
	}
	if d.passwords[normDN(u.dn)] != password {
		return "", gldap.ResultInvalidCredentials, "52e"
	}
	if uac, _ := strconv.Atoi(u.first("userAccountControl")); uac&uacAccountDisable != 0 {
		return "", gldap.ResultInvalidCredentials, "533"
	}
	return u.dn, gldap.ResultSuccess, ""
}

var errNotBound = &ldapErr{code: gldap.ResultOperationsError,
	msg: "000004DC: LdapErr: DSID-0C090A5C, comment: In order to perform this operation a successful bind must be completed on the connection., data 0, v4563"}

func (c *frontend) handleSearch(w *gldap.ResponseWriter, r *gldap.Request) {
	done := r.NewSearchDoneResponse(gldap.WithResponseCode(gldap.ResultSuccess))
	defer func() { _ = w.Write(done) }()
	m, err := r.GetSearchMessage()
	if err != nil {
		done.SetResultCode(gldap.ResultProtocolError)
		return
	}
	if c.boundAs(r.ConnectionID()) == "" {
		done.SetResultCode(errNotBound.code)
		done.SetDiagnosticMessage(errNotBound.msg)
		return
	}
	entries, lerr := c.dir.search(m.BaseDN, int(m.Scope), m.Filter, m.Attributes)
	if lerr != nil {
		done.SetResultCode(lerr.code)
		done.SetDiagnosticMessage(lerr.msg)
		return
	}
	for _, e := range entries {
		resp := r.NewSearchResponseEntry(e.DN)
		for _, a := range e.Attributes {
			resp.AddAttribute(a.Name, a.Values)
		}
		if err := w.Write(resp); err != nil {
			return
		}
	}
}

// search answers a search with copies of the matching entries.
func (d *directory) search(base string, scope int, filter string, attrs []string) ([]*gldap.Entry, *ldapErr) {
	f, err := compileFilter(filter)
	if err != nil {
		return nil, &ldapErr{code: gldap.ResultUnwillingToPerform, msg: err.Error()}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lookup(base) == nil {
		return nil, d.noSuchObject(base)
	}
	var out []*gldap.Entry
	for _, e := range d.under(base, scope) {
		if !f.matches(e) {
			continue
		}
		out = append(out, e.project(attrs))
	}
	return out, nil
}

// project copies an entry with the attributes asked for (all when none or
// "*" is asked for).
func (e *entry) project(attrs []string) *gldap.Entry {
	all := len(attrs) == 0
	want := map[string]bool{}
	for _, a := range attrs {
		if a == "*" {
			all = true
		}
		want[strings.ToLower(a)] = true
	}
	m := map[string][]string{}
	for k, v := range e.attrs {
		if all || want[k] {
			m[e.names[k]] = append([]string(nil), v...)
		}
	}
	return gldap.NewEntry(e.dn, m)
}

func (c *frontend) handleAdd(w *gldap.ResponseWriter, r *gldap.Request) {
	res := r.NewResponse(gldap.WithApplicationCode(gldap.ApplicationAddResponse), gldap.WithResponseCode(gldap.ResultSuccess))
	defer func() { _ = w.Write(res) }()
	m, err := r.GetAddMessage()
	if err != nil {
		res.SetResultCode(gldap.ResultProtocolError)
		return
	}
	attrs := map[string][]string{}
	for _, a := range m.Attributes {
		attrs[a.Type] = a.Vals
	}
	if lerr := c.dir.addComputer(c.boundAs(r.ConnectionID()), m.DN, attrs); lerr != nil {
		res.SetResultCode(lerr.code)
		res.SetDiagnosticMessage(lerr.msg)
	}
}

// insufficientRights is AD's answer to a write the bound user may not make.
func insufficientRights() *ldapErr {
	return &ldapErr{code: gldap.ResultInsufficientAccessRights, msg: "00000005: SecErr: DSID-03152857, problem 4003 (INSUFF_ACCESS_RIGHTS), data 0"}
}

// addComputer adds a computer object on behalf of the bound user.
func (d *directory) addComputer(by, dn string, attrs map[string][]string) *ldapErr {
	if by == "" {
		return errNotBound
	}
	if !validDN(dn) {
		return &ldapErr{code: gldap.ResultInvalidDNSyntax, msg: "00002081: NameErr: DSID-03050F42, problem 2003 (BAD_ATT_SYNTAX), data 0"}
	}
	computer := false
	for k, v := range attrs {
		if strings.EqualFold(k, "objectClass") {
			for _, c := range v {
				computer = computer || strings.EqualFold(c, "computer")
			}
		}
	}
	if !computer {
		return &ldapErr{code: gldap.ResultUnwillingToPerform, msg: "sandbox: only computer objects are added over LDAP here; the sandbox adds users, groups and OUs through Controller"}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	parent := parentDN(dn)
	if d.lookup(parent) == nil {
		return d.noSuchObject(dn)
	}
	if d.lookup(dn) != nil {
		return &ldapErr{code: gldap.ResultEntryAlreadyExists, msg: "00002071: UpdErr: DSID-03050505, problem 6005 (ENTRY_EXISTS), data 0"}
	}
	sam := ""
	for k, v := range attrs {
		if strings.EqualFold(k, "sAMAccountName") && len(v) > 0 {
			sam = v[0]
		}
	}
	if sam == "" {
		sam = strings.ToUpper(strings.TrimPrefix(strings.SplitN(splitDN(dn)[0], "=", 2)[1], " ")) + "$"
	}
	if d.bySAM(sam) != nil {
		// The SAM account name is unique in the domain (ERROR_USER_EXISTS).
		return &ldapErr{code: gldap.ResultEntryAlreadyExists, msg: "00000524: UpdErr: DSID-031A11E2, problem 6005 (ENTRY_EXISTS), data 0"}
	}
	user := d.lookup(by)
	admin := d.isDomainAdmin(by)
	quota := false
	switch {
	case admin, d.isDelegated(parent, by):
	case normDN(parent) == normDN("CN=Computers,"+d.baseDN):
		quota = true
		if d.quotaUsed[user.first("objectSid")] >= defaultMachineAccountQuota {
			// Microsoft Learn: over the quota, "Your computer could not be
			// joined to the domain. You have exceeded the maximum number of
			// computer accounts you are allowed to create in this domain."
			return &ldapErr{code: gldap.ResultAdminLimitExceeded, msg: "0000216D: SvcErr: DSID-031A1236, problem 5003 (WILL_NOT_PERFORM), data 0"}
		}
	default:
		return insufficientRights()
	}
	e := d.put(dn, "top", "person", "organizationalPerson", "user", "computer")
	e.set("cn", strings.SplitN(splitDN(dn)[0], "=", 2)[1])
	e.set("sAMAccountName", sam)
	e.set("objectSid", d.sid(d.allocRID()))
	e.set("primaryGroupID", strconv.Itoa(ridDomainComputers))
	e.set("userAccountControl", strconv.Itoa(uacWorkstationTrust))
	e.set("mS-DS-CreatorSID", user.first("objectSid"))
	for k, v := range attrs {
		switch strings.ToLower(k) {
		case "dnshostname", "serviceprincipalname", "description", "operatingsystem", "operatingsystemversion":
			e.set(k, v...)
		case "unicodepwd":
			if len(v) > 0 {
				d.passwords[normDN(dn)] = v[0]
			}
		case "useraccountcontrol":
			e.set("userAccountControl", v...)
		}
	}
	if quota {
		d.quotaUsed[user.first("objectSid")]++
	}
	return nil
}

func (c *frontend) handleModify(w *gldap.ResponseWriter, r *gldap.Request) {
	res := r.NewModifyResponse(gldap.WithResponseCode(gldap.ResultSuccess))
	defer func() { _ = w.Write(res) }()
	m, err := r.GetModifyMessage()
	if err != nil {
		res.SetResultCode(gldap.ResultProtocolError)
		return
	}
	if lerr := c.dir.modifyComputer(c.boundAs(r.ConnectionID()), m.DN, m.Changes); lerr != nil {
		res.SetResultCode(lerr.code)
		res.SetDiagnosticMessage(lerr.msg)
	}
}

// mayWriteComputer: its creator, a user delegated on its container, or
// Domain Admins.
func (d *directory) mayWriteComputer(by string, e *entry) bool {
	if d.isDomainAdmin(by) || d.isDelegated(parentDN(e.dn), by) {
		return true
	}
	u := d.lookup(by)
	return u != nil && u.first("objectSid") == e.first("mS-DS-CreatorSID")
}

// computerAt is the computer object at dn that a bound user writes (verb:
// "modified", "deleted"); the caller holds d.mu.
func (d *directory) computerAt(by, dn, verb string) (*entry, *ldapErr) {
	if by == "" {
		return nil, errNotBound
	}
	e := d.lookup(dn)
	if e == nil {
		return nil, d.noSuchObject(dn)
	}
	if !e.hasClass("computer") {
		return nil, &ldapErr{code: gldap.ResultUnwillingToPerform, msg: "sandbox: only computer objects are " + verb + " over LDAP here"}
	}
	return e, nil
}

func (d *directory) modifyComputer(by, dn string, changes []gldap.Change) *ldapErr {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, lerr := d.computerAt(by, dn, "modified")
	if lerr != nil {
		return lerr
	}
	if !d.mayWriteComputer(by, e) {
		return insufficientRights()
	}
	for _, ch := range changes {
		// gldap hands a modify's values over with their BER tag and length
		// (an add's without): ConvertString, gldap's own helper, strips them.
		vals, err := gldap.ConvertString(ch.Modification.Vals...)
		if err != nil {
			return &ldapErr{code: gldap.ResultProtocolError, msg: err.Error()}
		}
		ch.Modification.Vals = vals
		name := strings.ToLower(ch.Modification.Type)
		switch name {
		case "unicodepwd":
			if len(ch.Modification.Vals) > 0 {
				d.passwords[normDN(e.dn)] = ch.Modification.Vals[0]
			}
		case "useraccountcontrol", "dnshostname", "serviceprincipalname", "description", "operatingsystem", "operatingsystemversion":
			switch ch.Operation {
			case gldap.ReplaceAttribute:
				e.set(ch.Modification.Type, ch.Modification.Vals...)
			case gldap.AddAttribute:
				e.set(ch.Modification.Type, append(e.get(name), ch.Modification.Vals...)...)
			case gldap.DeleteAttribute:
				e.set(ch.Modification.Type)
			}
		default:
			return &ldapErr{code: gldap.ResultUnwillingToPerform, msg: fmt.Sprintf("sandbox: modifying %s is not modelled", ch.Modification.Type)}
		}
	}
	return nil
}

func (c *frontend) handleDelete(w *gldap.ResponseWriter, r *gldap.Request) {
	res := r.NewResponse(gldap.WithApplicationCode(gldap.ApplicationDelResponse), gldap.WithResponseCode(gldap.ResultSuccess))
	defer func() { _ = w.Write(res) }()
	m, err := r.GetDeleteMessage()
	if err != nil {
		res.SetResultCode(gldap.ResultProtocolError)
		return
	}
	if lerr := c.dir.deleteComputer(c.boundAs(r.ConnectionID()), m.DN); lerr != nil {
		res.SetResultCode(lerr.code)
		res.SetDiagnosticMessage(lerr.msg)
	}
}

func (d *directory) deleteComputer(by, dn string) *ldapErr {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, lerr := d.computerAt(by, dn, "deleted")
	if lerr != nil {
		return lerr
	}
	// Deleting needs Delete Computer objects on the container (or Domain
	// Admins); the creator through the quota has no such right.
	if !d.isDomainAdmin(by) && !d.isDelegated(parentDN(e.dn), by) {
		return insufficientRights()
	}
	d.removeEntry(e)
	return nil
}

// removeEntry deletes an object and its memberships.
func (d *directory) removeEntry(e *entry) {
	delete(d.entries, normDN(e.dn))
	delete(d.passwords, normDN(e.dn))
	for _, g := range d.entries {
		if ms := g.get("member"); len(ms) > 0 {
			kept := ms[:0:0]
			for _, m := range ms {
				if normDN(m) != normDN(e.dn) {
					kept = append(kept, m)
				}
			}
			g.set("member", kept...)
		}
	}
}

// ErrNotFound is returned for an object the directory does not hold.
var ErrNotFound = errors.New("addomain: no such object")
