package addomain

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The directory's administration, as an administrator does it with Active
// Directory Users and Computers or the ActiveDirectory module (New-ADUser,
// New-ADOrganizationalUnit, New-ADGroup, Add-ADGroupMember, the Delegation of
// Control wizard). The sandbox and the tests set the domain up with it; the
// guests only ever reach the controller over LDAP.

// AddOU adds an organizational unit dn (OU=Servers,DC=corp,...) whose parent
// exists.
func (c *Controller) AddOU(dn string) error {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	first := splitDN(dn)
	if !validDN(dn) || !strings.HasPrefix(strings.ToUpper(first[0]), "OU=") {
		return fmt.Errorf("addomain: %q is not an OU's DN (OU=name,...)", dn)
	}
	if d.lookup(parentDN(dn)) == nil {
		return fmt.Errorf("addomain: the parent of %s does not exist", dn)
	}
	if d.lookup(dn) != nil {
		return fmt.Errorf("addomain: %s exists", dn)
	}
	d.put(dn, "top", "organizationalUnit").set("ou", strings.SplitN(first[0], "=", 2)[1])
	return nil
}

// AddUser adds an enabled user sam with password in the container or OU
// parent, and returns its DN.
func (c *Controller) AddUser(parent, sam, password string) (string, error) {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lookup(parent) == nil {
		return "", fmt.Errorf("addomain: %s does not exist", parent)
	}
	if d.bySAM(sam) != nil {
		return "", fmt.Errorf("addomain: an account named %s exists", sam)
	}
	dn := "CN=" + sam + "," + parent
	u := d.put(dn, "top", "person", "organizationalPerson", "user")
	u.set("cn", sam)
	u.set("sAMAccountName", sam)
	u.set("userPrincipalName", sam+"@"+d.dnsName)
	u.set("userAccountControl", strconv.Itoa(uacNormalAccount))
	rid := d.allocRID()
	if strings.EqualFold(sam, "Administrator") {
		rid = ridAdministrator
	}
	u.set("objectSid", d.sid(rid))
	d.passwords[normDN(dn)] = password
	return dn, nil
}

// AddGroup adds a global security group name in parent and returns its DN.
func (c *Controller) AddGroup(parent, name string) (string, error) {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lookup(parent) == nil {
		return "", fmt.Errorf("addomain: %s does not exist", parent)
	}
	if d.bySAM(name) != nil {
		return "", fmt.Errorf("addomain: an account named %s exists", name)
	}
	dn := "CN=" + name + "," + parent
	d.group(dn, name, d.allocRID())
	return dn, nil
}

// AddMember adds the account sam (a user, a group, or a computer as NAME$)
// to group, both by sAMAccountName.
func (c *Controller) AddMember(group, sam string) error {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.bySAM(group)
	if g == nil || !g.hasClass("group") {
		return fmt.Errorf("addomain: no group named %s", group)
	}
	m := d.bySAM(sam)
	if m == nil {
		return fmt.Errorf("addomain: no account named %s", sam)
	}
	for _, x := range g.get("member") {
		if normDN(x) == normDN(m.dn) {
			return nil
		}
	}
	g.set("member", append(g.get("member"), m.dn)...)
	return nil
}

// Delegate grants user (by sAMAccountName) Create and Delete Computer objects
// on the container or OU dn, as the Delegation of Control wizard does for a
// join account.
func (c *Controller) Delegate(dn, user string) error {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lookup(dn) == nil {
		return fmt.Errorf("addomain: %s does not exist", dn)
	}
	u := d.bySAM(user)
	if u == nil {
		return fmt.Errorf("addomain: no account named %s", user)
	}
	d.delegated[normDN(dn)] = append(d.delegated[normDN(dn)], u.dn)
	return nil
}

// Computer is a computer account as the directory holds it.
type Computer struct {
	Name        string // the computer's name (sAMAccountName without $)
	DN          string
	DNSHostName string
	Disabled    bool
	CreatorSID  string // mS-DS-CreatorSID
	SID         string
}

func (d *directory) computerOf(e *entry) Computer {
	uac, _ := strconv.Atoi(e.first("userAccountControl"))
	return Computer{
		Name: strings.TrimSuffix(e.first("sAMAccountName"), "$"), DN: e.dn, DNSHostName: e.first("dNSHostName"),
		Disabled: uac&uacAccountDisable != 0, CreatorSID: e.first("mS-DS-CreatorSID"), SID: e.first("objectSid"),
	}
}

// Computers lists the domain's computer accounts, by name.
func (c *Controller) Computers() []Computer {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Computer
	for _, e := range d.entries {
		if e.hasClass("computer") {
			out = append(out, d.computerOf(e))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Computer finds the computer account of the computer name (without $).
func (c *Controller) Computer(name string) (Computer, bool) {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.bySAM(name + "$")
	if e == nil || !e.hasClass("computer") {
		return Computer{}, false
	}
	return d.computerOf(e), true
}

// UserSID is the objectSid of the user sam.
func (c *Controller) UserSID(sam string) (string, error) {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	u := d.bySAM(sam)
	if u == nil {
		return "", fmt.Errorf("%w: account %s", ErrNotFound, sam)
	}
	return u.first("objectSid"), nil
}

// IsMember reports whether the account sam (a computer as NAME$, a user or
// a group) is a member of group, directly, through nested groups, or by its
// primary group, as a Kerberos ticket's group SIDs would carry it (what a
// gMSA's msDS-GroupMSAMembership is checked against).
func (c *Controller) IsMember(sam, group string) (bool, error) {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.bySAM(group)
	if g == nil || !g.hasClass("group") {
		return false, fmt.Errorf("%w: group %s", ErrNotFound, group)
	}
	m := d.bySAM(sam)
	if m == nil {
		return false, fmt.Errorf("%w: account %s", ErrNotFound, sam)
	}
	return d.memberOf(m.dn, g, map[string]bool{}), nil
}
