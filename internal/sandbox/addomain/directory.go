package addomain

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// userAccountControl flags (Microsoft Learn, "Use the UserAccountControl
// flags to manipulate user account properties").
const (
	uacAccountDisable          = 0x2
	uacNormalAccount           = 0x200
	uacWorkstationTrust        = 0x1000
	defaultMachineAccountQuota = 10
)

// Well-known RIDs (Microsoft Learn, "Well-known SIDs").
const (
	ridAdministrator   = 500
	ridDomainAdmins    = 512
	ridDomainComputers = 515
	firstRID           = 1103
)

// entry is one directory object; attribute names are kept as AD spells them
// and looked up without regard to case, as LDAP does.
type entry struct {
	dn    string
	attrs map[string][]string // key: lower-case attribute name
	names map[string]string   // lower-case name -> AD's spelling
}

func newEntry(dn string) *entry {
	return &entry{dn: dn, attrs: map[string][]string{}, names: map[string]string{}}
}

func (e *entry) set(name string, vals ...string) {
	k := strings.ToLower(name)
	if len(vals) == 0 {
		delete(e.attrs, k)
		delete(e.names, k)
		return
	}
	e.attrs[k] = append([]string(nil), vals...)
	e.names[k] = name
}

func (e *entry) get(name string) []string { return e.attrs[strings.ToLower(name)] }

func (e *entry) first(name string) string {
	if v := e.get(name); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (e *entry) hasClass(class string) bool {
	for _, c := range e.get("objectClass") {
		if strings.EqualFold(c, class) {
			return true
		}
	}
	return false
}

// directory is the domain's naming context, guarded by one lock.
type directory struct {
	mu        sync.Mutex
	dnsName   string // corp.example.test
	netbios   string // CORP
	baseDN    string // DC=corp,DC=example,DC=test
	domainSID string // S-1-5-21-x-y-z
	nextRID   int
	entries   map[string]*entry   // key: normalized DN
	passwords map[string]string   // normalized DN -> password (never an attribute: AD never returns unicodePwd)
	delegated map[string][]string // normalized container DN -> user DNs delegated create/delete of computer objects
	quotaUsed map[string]int      // creator SID -> computers added through ms-DS-MachineAccountQuota
}

// normDN normalizes a DN for lookups: RDNs trimmed and compared without case.
func normDN(dn string) string {
	parts := splitDN(dn)
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		parts[i] = strings.ToLower(strings.TrimSpace(k)) + "=" + strings.ToLower(strings.TrimSpace(v))
	}
	return strings.Join(parts, ",")
}

// splitDN splits a DN at its unescaped commas.
func splitDN(dn string) []string {
	var parts []string
	var b strings.Builder
	esc := false
	for _, r := range dn {
		switch {
		case esc:
			b.WriteRune(r)
			esc = false
		case r == '\\':
			b.WriteRune(r)
			esc = true
		case r == ',':
			parts = append(parts, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteRune(r)
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" || len(parts) > 0 {
		parts = append(parts, s)
	}
	return parts
}

// parentDN is the DN without its first RDN.
func parentDN(dn string) string {
	parts := splitDN(dn)
	if len(parts) < 2 {
		return ""
	}
	return strings.Join(parts[1:], ",")
}

// validDN reports whether every RDN of dn has a type and a value.
func validDN(dn string) bool {
	parts := splitDN(dn)
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
			return false
		}
	}
	return true
}

func newDirectory(dnsName, netbios string) *directory {
	labels := strings.Split(dnsName, ".")
	for i, l := range labels {
		labels[i] = "DC=" + l
	}
	id := uuid.New()
	d := &directory{
		dnsName: strings.ToLower(dnsName), netbios: strings.ToUpper(netbios), baseDN: strings.Join(labels, ","),
		domainSID: fmt.Sprintf("S-1-5-21-%d-%d-%d", 1000000000+uint32(id[0])<<16|uint32(id[1]), 1000000000+uint32(id[2])<<16|uint32(id[3]), 1000000000+uint32(id[4])<<16|uint32(id[5])),
		nextRID:   firstRID,
		entries:   map[string]*entry{}, passwords: map[string]string{},
		delegated: map[string][]string{}, quotaUsed: map[string]int{},
	}
	root := d.put(d.baseDN, "top", "domain", "domainDNS")
	root.set("dc", labels[0][3:])
	root.set("objectSid", d.domainSID)
	root.set("ms-DS-MachineAccountQuota", strconv.Itoa(defaultMachineAccountQuota))
	for _, c := range []string{"Users", "Computers"} {
		d.put("CN="+c+","+d.baseDN, "top", "container").set("cn", c)
	}
	d.put("OU=Domain Controllers,"+d.baseDN, "top", "organizationalUnit").set("ou", "Domain Controllers")
	d.group("CN=Domain Admins,CN=Users,"+d.baseDN, "Domain Admins", ridDomainAdmins)
	d.group("CN=Domain Computers,CN=Users,"+d.baseDN, "Domain Computers", ridDomainComputers)
	return d
}

// put adds an entry with its object classes and the attributes every object
// has; the caller holds the lock or owns d.
func (d *directory) put(dn string, classes ...string) *entry {
	e := newEntry(dn)
	e.set("objectClass", classes...)
	e.set("distinguishedName", dn)
	e.set("objectGUID", uuid.NewString())
	e.set("whenCreated", time.Now().UTC().Format("20060102150405.0Z"))
	d.entries[normDN(dn)] = e
	return e
}

func (d *directory) sid(rid int) string { return d.domainSID + "-" + strconv.Itoa(rid) }

func (d *directory) allocRID() int {
	r := d.nextRID
	d.nextRID++
	return r
}

func (d *directory) group(dn, name string, rid int) *entry {
	g := d.put(dn, "top", "group")
	g.set("cn", name)
	g.set("sAMAccountName", name)
	g.set("objectSid", d.sid(rid))
	return g
}

func (d *directory) lookup(dn string) *entry { return d.entries[normDN(dn)] }

// bySAM finds the object whose sAMAccountName is name, without regard to case.
func (d *directory) bySAM(name string) *entry {
	for _, e := range d.entries {
		if strings.EqualFold(e.first("sAMAccountName"), name) {
			return e
		}
	}
	return nil
}

// bySID finds the object whose objectSid is sid.
func (d *directory) bySID(sid string) *entry {
	for _, e := range d.entries {
		if e.first("objectSid") == sid && !e.hasClass("domainDNS") {
			return e
		}
	}
	return nil
}

// resolveUser turns a bind name (a DN, DOMAIN\user or user@dns.domain, or a
// bare sAMAccountName) into the user object.
func (d *directory) resolveUser(name string) *entry {
	if e := d.lookup(name); e != nil && validDN(name) {
		return e
	}
	if dom, user, ok := strings.Cut(name, `\`); ok {
		if !strings.EqualFold(dom, d.netbios) && !strings.EqualFold(dom, d.dnsName) {
			return nil
		}
		name = user
	} else if user, dom, ok := strings.Cut(name, "@"); ok {
		if !strings.EqualFold(dom, d.dnsName) {
			return nil
		}
		name = user
	}
	if e := d.bySAM(name); e != nil && e.hasClass("user") && !e.hasClass("computer") {
		return e
	}
	return nil
}

// memberOf reports whether the object dn is a member of group g, directly or
// through nested groups.
func (d *directory) memberOf(dn string, g *entry, seen map[string]bool) bool {
	if seen[normDN(g.dn)] {
		return false
	}
	seen[normDN(g.dn)] = true
	for _, m := range g.get("member") {
		if normDN(m) == normDN(dn) {
			return true
		}
		if sub := d.lookup(m); sub != nil && sub.hasClass("group") && d.memberOf(dn, sub, seen) {
			return true
		}
	}
	// The primary group (Domain Computers for a computer account) is not in
	// member: AD derives it from primaryGroupID.
	if e := d.lookup(dn); e != nil && e.first("primaryGroupID") != "" && g.first("objectSid") == d.domainSID+"-"+e.first("primaryGroupID") {
		return true
	}
	return false
}

func (d *directory) isDomainAdmin(userDN string) bool {
	g := d.bySID(d.sid(ridDomainAdmins))
	return g != nil && d.memberOf(userDN, g, map[string]bool{})
}

func (d *directory) isDelegated(container, userDN string) bool {
	for _, u := range d.delegated[normDN(container)] {
		if normDN(u) == normDN(userDN) {
			return true
		}
	}
	return false
}

// children lists the entries directly under dn, sorted by DN for stable
// answers.
func (d *directory) under(base string, scope int) []*entry {
	nb := normDN(base)
	var out []*entry
	for k, e := range d.entries {
		switch scope {
		case 0:
			if k == nb {
				out = append(out, e)
			}
		case 1:
			if normDN(parentDN(e.dn)) == nb {
				out = append(out, e)
			}
		default:
			if k == nb || strings.HasSuffix(k, ","+nb) {
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dn < out[j].dn })
	return out
}

// ldapErr is a refused operation: its LDAP result code and AD's diagnostic.
type ldapErr struct {
	code int
	msg  string
}

func (e *ldapErr) Error() string { return fmt.Sprintf("LDAP result %d: %s", e.code, e.msg) }

// noSuchObject is AD's answer for a DN that does not exist, with the best
// match it found above it.
func (d *directory) noSuchObject(dn string) *ldapErr {
	best := parentDN(dn)
	for best != "" && d.lookup(best) == nil {
		best = parentDN(best)
	}
	return &ldapErr{code: 32, msg: fmt.Sprintf("0000208D: NameErr: DSID-0310028C, problem 2001 (NO_OBJECT), data 0, best match of:\n\t'%s'\n", best)}
}
