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
}

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
		return nil, connectError(u, err)
	}
	c := &govmomi.Client{Client: vc, SessionManager: session.NewManager(vc)}
	user := url.UserPassword(cfg.User, cfg.Password)
	if err := c.Login(ctx, user); err != nil {
		if isAuthError(err) {
			return nil, fmt.Errorf("vCenter %s rejected the login of %q: check vsphere.user and vsphere.password (VSPHERE_USER, VSPHERE_PASSWORD)", u.Host, cfg.User)
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

func connectError(u *url.URL, err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var certErr *x509.CertificateInvalidError
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostnameErr) || errors.As(err, &certErr) || strings.Contains(err.Error(), "x509:") {
		return fmt.Errorf("cannot verify the TLS certificate of vCenter %s: %v; set vsphere.ca_file or vsphere.ca_certificate to the CA that signed it (or, for a lab only, allow_unverified_ssl = true)", u.Host, err)
	}
	return fmt.Errorf("cannot reach vCenter %s: %v; check vsphere.server (VSPHERE_SERVER), that vCenter is up and that the network allows HTTPS to it", u.Host, err)
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
