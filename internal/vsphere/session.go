package vsphere

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// loginTimeout bounds connecting and logging in, so a wrong server name fails
// in seconds with a message naming it instead of hanging an apply.
const loginTimeout = 30 * time.Second

// Config is how to reach vCenter.
type Config struct {
	Server   string // host name or host:port, or a full https URL
	User     string
	Password string
	// CACertificate is PEM to trust in addition to the system roots; CAFile
	// names a file holding such PEM. Either makes a private CA work without
	// turning verification off.
	CACertificate string
	CAFile        string
	// AllowUnverifiedSSL turns certificate verification off: an explicit,
	// documented opt-in for lab systems only.
	AllowUnverifiedSSL bool
	// AllowUnencryptedHTTP accepts an http:// server, which sends the
	// password and every session cookie in clear text: an explicit opt-in
	// for a simulator or a lab, refused otherwise (ErrUnencryptedHTTP).
	AllowUnencryptedHTTP bool
	// UserAgent is sent with every request; "" is UserAgent. The sandbox
	// counts the provider's calls by it (privileges.go).
	UserAgent string
	// ProvisioningUnitsPerHost is how many of an ESXi host's provisioning
	// units this Client's clones hold at once (slots.go): a full clone
	// takes UnitsPerFullClone, a linked one UnitsPerLinkedClone, on the
	// source's host and any destination host named. 0 is
	// DefaultProvisioningUnitsPerHost (16, a host's units); a negative
	// value sets no limit, leaving vCenter to queue.
	ProvisioningUnitsPerHost int
	// From says, for each setting by its attribute name ("password"), how
	// the user set it: "vsphere.password" in the provider block, or
	// "VSPHERE_PASSWORD" in the environment, so that an error names the one
	// to fix. A setting it does not hold is named both ways.
	From map[string]string
}

// setting names attribute attr of the provider's vsphere block as the user
// set it (From), else both ways.
func (cfg Config) setting(attr, env string) string {
	if n, ok := cfg.From[attr]; ok && n != "" {
		return n
	}
	return "vsphere." + attr + " (" + env + ")"
}

// ErrLoginRefused and ErrCertificateUnverified are wrapped by NewClient's
// errors when vCenter refused the user or password (an InvalidLogin fault),
// and when its certificate did not verify. Neither goes away by trying
// again: a caller may remember them for the rest of its run. Trying a
// refused password again would also count towards vCenter Single Sign-On's
// lockout policy: by default five failed logins within 180 s lock a
// vsphere.local account for 900 s (VMware Cloud Foundation, "Configure the
// Account Lockout Policy for vCenter Single Sign-On"; vSphere 7.0
// Authentication, "Edit the vCenter Single Sign-On Lockout Policy").
var (
	ErrLoginRefused          = errors.New("vCenter refused the login")
	ErrCertificateUnverified = errors.New("vCenter's TLS certificate did not verify")
)

// lastingError is an error of a kind above whose message says it whole.
type lastingError struct {
	kind error
	msg  string
}

func lasting(kind error, format string, args ...any) error {
	return &lastingError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func (e *lastingError) Error() string { return e.msg }
func (e *lastingError) Unwrap() error { return e.kind }

// UserAgent identifies the provider's vSphere sessions.
const UserAgent = "terraform-provider-windows"

// Client is a logged-in vCenter session. Its waits share one property
// collector (watch.go) and its clone placements one lookup cache
// (lookups.go), both made on first use; it is safe for concurrent use.
type Client struct {
	*govmomi.Client
	URL *url.URL // without credentials

	watchOnce sync.Once
	watch     *watcher
	lookOnce  sync.Once
	look      *Lookups
	relogin   *relogin   // nil for a Client not made by NewClient
	slots     *hostSlots // the hosts' provisioning units its clones hold (slots.go); nil: no limit
	restMu    sync.Mutex
	rest      *rest.Client // vCenter's REST API, for tags (metadata.go); logged in on first use
}

func (c *Client) watcher() *watcher {
	c.watchOnce.Do(func() { c.watch = newWatcher(c.Client.Client) })
	return c.watch
}

// Close ends the shared waits and removes their property collector and
// view from vCenter. It does not log out; waits started after it fail.
func (c *Client) Close() {
	c.watcher().close()
}

// logoutTimeout bounds Logout: Terraform gives a plugin 2 s to exit once it
// has asked it to stop (hashicorp/go-plugin, Client.Kill).
const logoutTimeout = 1500 * time.Millisecond

// Logout ends the shared waits and the vCenter session: without it every
// provider process would leave a session for vCenter's idle timeout (30
// minutes by default) to end, and a busy CI could reach the session limit
// (vpxd.httpClientIdleTimeout, config.vpxd.sessionLimit). A Client is not
// used after it.
func (c *Client) Logout(ctx context.Context) error {
	c.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), logoutTimeout)
	defer cancel()
	c.restMu.Lock()
	if c.rest != nil {
		// The REST session (tags) is a session of its own.
		_ = c.rest.Logout(ctx)
		c.rest = nil
	}
	c.restMu.Unlock()
	if err := c.SessionManager.Logout(ctx); err != nil {
		return fmt.Errorf("logging out of vCenter %s: %w", c.URL.Host, err)
	}
	return nil
}

// SDKURL turns the server setting into the SDK endpoint URL.
func (cfg Config) SDKURL() (*url.URL, error) {
	server := strings.TrimSpace(cfg.Server)
	if server == "" {
		return nil, errors.New("no vSphere server is configured: set vsphere.server (or VSPHERE_SERVER)")
	}
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("vsphere.server %q is not a host name, host:port or https URL", cfg.Server)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !cfg.AllowUnencryptedHTTP {
			return nil, fmt.Errorf("%w: vsphere.server %q would send the vCenter password and session in clear text; use https:// (or leave the scheme out), or, for a lab only, set vsphere.allow_unencrypted_http = true (VSPHERE_ALLOW_UNENCRYPTED_HTTP)", ErrUnencryptedHTTP, cfg.Server)
		}
	default:
		return nil, fmt.Errorf("vsphere.server %q: the scheme %q is not https", cfg.Server, u.Scheme)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/sdk"
	}
	return u, nil
}

// ErrUnencryptedHTTP is wrapped by SDKURL's error for an http:// server
// without AllowUnencryptedHTTP.
var ErrUnencryptedHTTP = errors.New("unencrypted http:// vCenter URL refused")

// NewClient connects and logs in to vCenter, verifying its certificate
// against the system roots plus the configured CA unless AllowUnverifiedSSL.
func NewClient(ctx context.Context, cfg Config) (*Client, error) {
	u, err := cfg.SDKURL()
	if err != nil {
		return nil, err
	}
	if cfg.User == "" {
		return nil, fmt.Errorf("no vSphere user is configured for %s: set vsphere.user (or VSPHERE_USER)", u.Host)
	}
	pool, err := cfg.rootCAs()
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	sc := soap.NewClient(u, cfg.AllowUnverifiedSSL)
	sc.UserAgent = cfg.UserAgent
	if sc.UserAgent == "" {
		sc.UserAgent = UserAgent
	}
	if pool != nil {
		sc.DefaultTransport().TLSClientConfig.RootCAs = pool
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, cfg.connectError(u, err)
	}
	c := &govmomi.Client{Client: vc, SessionManager: session.NewManager(vc)}
	user := url.UserPassword(cfg.User, cfg.Password)
	if err := c.Login(ctx, user); err != nil {
		if isAuthError(err) {
			return nil, lasting(ErrLoginRefused, "vCenter %s rejected the login of %q: check %s and %s", u.Host, cfg.User,
				cfg.setting("user", "VSPHERE_USER"), cfg.setting("password", "VSPHERE_PASSWORD"))
		}
		return nil, fmt.Errorf("logging in to vCenter %s: %w", u.Host, err)
	}
	// A session that ends mid-run (idle timeout, terminated) logs in again.
	rl := &relogin{RoundTripper: vc.RoundTripper, user: user, mgr: c.SessionManager}
	vc.RoundTripper = permissionFaults{RoundTripper: rl}
	return &Client{Client: c, URL: u, relogin: rl, slots: newHostSlots(cfg.ProvisioningUnitsPerHost)}, nil
}

func (cfg Config) rootCAs() (*x509.CertPool, error) {
	if cfg.CACertificate == "" && cfg.CAFile == "" {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading vsphere.ca_file: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("vsphere.ca_file %s holds no PEM certificate", cfg.CAFile)
		}
	}
	if cfg.CACertificate != "" && !pool.AppendCertsFromPEM([]byte(cfg.CACertificate)) {
		return nil, errors.New("vsphere.ca_certificate holds no PEM certificate")
	}
	return pool, nil
}

func (cfg Config) connectError(u *url.URL, err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var certErr *x509.CertificateInvalidError
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostnameErr) || errors.As(err, &certErr) || strings.Contains(err.Error(), "x509:") {
		fix := "set " + cfg.setting("ca_file", "VSPHERE_CA_FILE") + " or " + cfg.setting("ca_certificate", "VSPHERE_CA_CERTIFICATE") + " to the CA that signed it"
		switch {
		case cfg.CAFile != "":
			fix = cfg.setting("ca_file", "VSPHERE_CA_FILE") + " does not hold the CA that signed it: give that CA"
		case cfg.CACertificate != "":
			fix = cfg.setting("ca_certificate", "VSPHERE_CA_CERTIFICATE") + " does not hold the CA that signed it: give that CA"
		}
		return lasting(ErrCertificateUnverified, "cannot verify the TLS certificate of vCenter %s: %v; %s (or, for a lab only, %s = true)",
			u.Host, err, fix, cfg.setting("allow_unverified_ssl", "VSPHERE_ALLOW_UNVERIFIED_SSL"))
	}
	return fmt.Errorf("cannot reach vCenter %s: %v; check %s, that vCenter is up and that the network allows HTTPS to it", u.Host, err, cfg.setting("server", "VSPHERE_SERVER"))
}

func isAuthError(err error) bool {
	if soap.IsSoapFault(err) {
		switch soap.ToSoapFault(err).VimFault().(type) {
		case types.InvalidLogin, *types.InvalidLogin:
			return true
		}
	}
	return false
}
