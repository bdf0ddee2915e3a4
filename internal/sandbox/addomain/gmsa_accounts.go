package addomain

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Group Managed Service Accounts, as an administrator prepares them for
// Windows containers (Microsoft Learn, "Create gMSAs for Windows
// containers"):
//
//   - a KDS root key first (Add-KdsRootKey): without one the domain
//     controllers cannot compute a gMSA password, and New-ADServiceAccount
//     fails with "Key does not exist" (the same page: "If you get the error
//     'Key does not exist', ... create the KDS root key");
//   - the gMSA (New-ADServiceAccount -Name WebApp01 -DnsHostName ...
//     -PrincipalsAllowedToRetrieveManagedPassword <group>): objectClass
//     msDS-GroupManagedServiceAccount in CN=Managed Service Accounts,
//     sAMAccountName WebApp01$, msDS-GroupMSAMembership naming who may read
//     its password (held here as the principals' DNs; AD holds a security
//     descriptor);
//   - a host retrieves the password by reading msDS-ManagedPassword, which
//     the controller returns only to a principal msDS-GroupMSAMembership
//     grants, directly or through a group it is a member of (MS-ADTS
//     3.1.1.4.5.39 msDS-ManagedPassword; Microsoft Learn, "Group Managed
//     Service Accounts Overview"). Otherwise the read is refused.

// ErrNoKdsRootKey is New-ADServiceAccount's refusal in a domain without a
// KDS root key.
var ErrNoKdsRootKey = errors.New("Key does not exist") //nolint:staticcheck // Windows' own text, capitalized

// ErrPasswordReadDenied is a read of msDS-ManagedPassword by a principal the
// gMSA's msDS-GroupMSAMembership does not grant.
var ErrPasswordReadDenied = errors.New("the principal may not retrieve the gMSA's managed password")

const objectClassGMSA = "msDS-GroupManagedServiceAccount"

// AddKdsRootKey creates the domain's KDS root key (Add-KdsRootKey
// -EffectiveImmediately in a lab; Microsoft Learn warns a production
// domain waits up to 10 hours for replication, which the sandbox's one
// controller does not need).
func (c *Controller) AddKdsRootKey() {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.hasKdsRootKey() {
		d.put(d.kdsRootKeyDN(), "top", "msKds-ProvRootKey").set("cn", "sandbox-root-key")
	}
}

// kdsRootKeyDN is where the sandbox keeps its one root key: AD keeps them
// under CN=Master Root Keys,CN=Group Key Distribution Service,CN=Services in
// the configuration partition.
func (d *directory) kdsRootKeyDN() string {
	return "CN=sandbox-root-key,CN=Master Root Keys,CN=Group Key Distribution Service,CN=Services,CN=Configuration," + d.baseDN
}

func (d *directory) hasKdsRootKey() bool { return d.lookup(d.kdsRootKeyDN()) != nil }

// AddGMSA creates the gMSA name (without $) whose password the principals
// (sAMAccountNames: groups, or computers as NAME$) may retrieve, as
// New-ADServiceAccount -PrincipalsAllowedToRetrieveManagedPassword does,
// and returns its DN.
func (c *Controller) AddGMSA(name, dnsHostName string, principals ...string) (string, error) {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.hasKdsRootKey() {
		return "", ErrNoKdsRootKey
	}
	if d.bySAM(name+"$") != nil {
		return "", fmt.Errorf("New-ADServiceAccount: the specified account already exists: %s", name)
	}
	var allowed []string
	for _, p := range principals {
		e := d.bySAM(p)
		if e == nil {
			return "", fmt.Errorf("%w: principal %s", ErrNotFound, p)
		}
		allowed = append(allowed, e.dn)
	}
	container := "CN=Managed Service Accounts," + d.baseDN
	if d.lookup(container) == nil {
		d.put(container, "top", "container").set("cn", "Managed Service Accounts")
	}
	dn := "CN=" + name + "," + container
	// AD's class derives from computer; the sandbox leaves computer out so
	// that Computers lists the hosts' accounts only.
	e := d.put(dn, "top", objectClassGMSA)
	e.set("cn", name)
	e.set("sAMAccountName", name+"$")
	e.set("dNSHostName", dnsHostName)
	e.set("objectSid", d.sid(d.allocRID()))
	e.set("userAccountControl", strconv.Itoa(0x1000)) // WORKSTATION_TRUST_ACCOUNT, as AD stamps a gMSA
	e.set("msDS-GroupMSAMembership", allowed...)
	return dn, nil
}

// RetrieveManagedPassword is the read of gMSA's msDS-ManagedPassword by
// the account sam (a computer as NAME$): nil when msDS-GroupMSAMembership
// grants it, directly or through a group; ErrPasswordReadDenied otherwise,
// and ErrNotFound for a gMSA or account that does not exist.
func (c *Controller) RetrieveManagedPassword(sam, gmsa string) error {
	d := c.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.bySAM(strings.TrimSuffix(gmsa, "$") + "$")
	if g == nil || !g.hasClass(objectClassGMSA) {
		return fmt.Errorf("%w: gMSA %s", ErrNotFound, gmsa)
	}
	reader := d.bySAM(sam)
	if reader == nil {
		return fmt.Errorf("%w: account %s", ErrNotFound, sam)
	}
	for _, p := range g.get("msDS-GroupMSAMembership") {
		if normDN(p) == normDN(reader.dn) {
			return nil
		}
		if pe := d.lookup(p); pe != nil && pe.hasClass("group") && d.memberOf(reader.dn, pe, map[string]bool{}) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s reading %s", ErrPasswordReadDenied, sam, gmsa)
}
