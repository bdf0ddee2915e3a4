// Package vcsim runs govmomi's vCenter simulator as the sandbox's vSphere: a
// small site (one datacenter, a three-host cluster, a standalone host, two
// datastores, port groups) with Windows Server base templates, served over
// TLS on 127.0.0.1 with a sandbox-CA certificate and real credentials.
//
// Clones behave as on vCenter where vcsim differs (fidelity.go): they carry
// the source's extraConfig (the template's Windows build), get fresh BIOS and
// instance UUIDs, and linked clones get child disks of the source's disk.
// OnClone lets the sandbox see (and refuse) clone requests; OnRequest holds
// a request in flight. With Options.Latency it takes vCenter's time
// (timing.go): tasks queued for the hosts' provisioning units, then running
// for the model's durations, and every call's round trip.
package vcsim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"

	// Registers the storage policy (PBM) endpoint at /pbm: hashicorp/vsphere
	// opens a PBM client (pbm.NewClient) on every run against a vCenter, and
	// fails to start without it ("POST "/pbm": 404 Not Found").
	_ "github.com/vmware/govmomi/pbm/simulator"
	// Registers the vAPI (REST) endpoints: sessions, tags, content library.
	// hashicorp/vsphere logs in to them on every run (tags), so users can
	// compose with it.
	_ "github.com/vmware/govmomi/vapi/simulator"
)

// Options configure the simulator.
type Options struct {
	// Certificate is the TLS serving certificate (for 127.0.0.1).
	Certificate tls.Certificate
	// RootCAs verifies Certificate; the inventory is built through a client
	// that trusts only these, proving the endpoint before anyone else uses it.
	RootCAs *x509.CertPool
	// User and Password are the administrator's credentials: the Admin
	// role on the root folder, unchecked (it holds every privilege).
	User, Password string
	// ProviderUser and ProviderPassword, when set, are a second account:
	// the provider's, holding only the least-privilege guide's roles on
	// their objects (authz.go), and every call it makes is checked against
	// them as vCenter checks it.
	ProviderUser, ProviderPassword string
	// Latency times vCenter's tasks and queues them on the hosts'
	// provisioning units (internal/sandbox/latency); nil answers at once.
	Latency *latency.Model
	Logf    func(format string, args ...any)
}

// Server is a running simulator and the inventory the sandbox created in it.
type Server struct {
	// URL is the SDK endpoint (https://127.0.0.1:port/sdk), without credentials.
	URL *url.URL
	// Server is host:port, the value of VSPHERE_SERVER.
	Server         string
	User, Password string
	// ProviderUser and ProviderPassword: Options'; "" without one.
	ProviderUser, ProviderPassword string

	Datacenter string // "DC0"
	// Folder is the inventory path of the VM folder for new VMs.
	Folder string
	// TemplateFolder holds the base templates; GoldenFolder the golden
	// images.
	TemplateFolder, GoldenFolder string
	// Templates maps a Windows Server version ("2019", "2022") to the
	// inventory path of its base template.
	Templates map[string]string
	// Managed object ids (e.g. "resgroup-22") of the placement defaults.
	ResourcePoolID, DatastoreID, NetworkID string
	// Site: the datastore cluster, tags and custom attribute (site.go).
	Site Site

	// Model and HTTP expose the simulator itself, for hooks (power-on
	// handlers, fault rules) that later sandbox parts install.
	Model *simulator.Model
	HTTP  *simulator.Server

	hooks    methodHooks
	requests *requestHooks
	calls    calls
	waits    waits
	timing   *timing    // timing.go; nil without Options.Latency
	guest    guestOps   // guestops.go
	notes    cloneNotes // notes.go
	// restSessions: the vAPI sessions' users (tagging.go).
	restSessions restSessions
	authz        *authz         // authz.go
	roots        *x509.CertPool // that verify the server's certificate
	logf         func(format string, args ...any)

	closeOnce sync.Once
}

// Start creates the simulator, serves it on a free 127.0.0.1 port and builds
// the sandbox inventory. Close releases it.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	if opts.User == "" || opts.Password == "" {
		return nil, fmt.Errorf("vcsim: user and password are required")
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}

	model := simulator.VPX()
	model.Datacenter = 1
	model.Cluster = 1
	model.ClusterHost = 3
	model.Host = 1      // a standalone host beside the cluster, as many sites have
	model.Datastore = 2 // mounted on every host
	model.Portgroup = 2 // distributed port groups beside the standard "VM Network"
	model.Machine = 0   // no stock DC0_H0_VM0-style VMs: only our templates
	if err := model.Create(); err != nil {
		return nil, fmt.Errorf("vcsim: creating model: %w", err)
	}
	defer func() {
		if err != nil {
			model.Remove()
		}
	}()

	model.Service.RegisterEndpoints = true
	model.Service.TLS = &tls.Config{Certificates: []tls.Certificate{opts.Certificate}, MinVersion: tls.VersionTLS12}
	// With a user in Listen the simulator accepts only these credentials
	// (its default accepts any non-empty ones).
	model.Service.Listen = &url.URL{Host: "127.0.0.1:0", User: url.UserPassword(opts.User, opts.Password)}
	if opts.ProviderUser != "" {
		// Two accounts: the simulator then asks ValidLogin instead of
		// comparing with Listen's user.
		model.Map().SessionManager().ValidLogin = func(req *types.Login) bool {
			return (req.UserName == opts.User && req.Password == opts.Password) ||
				(req.UserName == opts.ProviderUser && req.Password == opts.ProviderPassword)
		}
	}
	requests := &requestHooks{}
	requests.install(model.Service, model.Map().Path)
	timed := newTiming(opts.Latency, model.Map())
	if timed != nil {
		requests.Add(timed.callLatency)
	}
	// Exactly the path vCenter's transfer URLs have; vcsim's own handler
	// serves the "/guestFile/" subtree (its container VMs).
	var s *Server
	model.Service.ServeMux.HandleFunc(GuestFilePath, func(w http.ResponseWriter, r *http.Request) { s.serveGuestFile(w, r) })
	s = &Server{authz: &authz{user: opts.ProviderUser}}
	s.installTagging(model.Service)
	httpSrv := model.Service.NewServer()
	defer func() {
		if err != nil {
			httpSrv.Close()
		}
	}()

	u := *httpSrv.URL
	u.User = nil
	*s = Server{
		URL:          &u,
		Server:       u.Host,
		User:         opts.User,
		Password:     opts.Password,
		ProviderUser: opts.ProviderUser, ProviderPassword: opts.ProviderPassword,
		authz:      &authz{user: opts.ProviderUser},
		Datacenter: "DC0",
		Model:      model,
		HTTP:       httpSrv,
		requests:   requests,
		roots:      opts.RootCAs,
		timing:     timed,
		logf:       logf,
	}
	s.installHandler()
	s.aliasClusters()
	logf("vcsim: serving the vSphere API at %s", s.URL)

	c, err := s.login(ctx, opts.RootCAs)
	if err != nil {
		return nil, err
	}
	defer func() {
		// The inventory session is ours alone; a failed logout changes nothing.
		_ = session.NewManager(c).Logout(context.WithoutCancel(ctx))
	}()
	if err := s.buildInventory(ctx, c, logf); err != nil {
		return nil, err
	}
	if s.ProviderUser != "" {
		if err := s.grantProvider(ctx, c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// login connects with certificate verification against roots (never
// insecure) and logs in with the server's credentials.
func (s *Server) login(ctx context.Context, roots *x509.CertPool) (*vim25.Client, error) {
	sc := soap.NewClient(s.URL, false)
	sc.DefaultTransport().TLSClientConfig.RootCAs = roots
	c, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("vcsim: connecting to %s: %w", s.URL, err)
	}
	if err := session.NewManager(c).Login(ctx, url.UserPassword(s.User, s.Password)); err != nil {
		return nil, fmt.Errorf("vcsim: logging in to %s as %s: %w", s.URL, s.User, err)
	}
	return c, nil
}

// Close stops serving and removes the simulator's datastore directories,
// within moments whatever clients left open (at most closeWait): a long
// poll (WaitForUpdatesEx) with no MaxWaitSeconds never ends on its own in
// vcsim, even once its client has gone, and httptest.Server.Close waits for
// it (waits.go). It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		// No request held for its round trip or task left to play
		// (timing.go), no new connection (a client retrying its long poll),
		// then none of the old ones, then no call still waiting for updates.
		s.timing.stop()
		_ = s.HTTP.Listener.Close()
		s.HTTP.CloseClientConnections()
		if !s.waits.closeServer(s.HTTP.Close) {
			s.logf("vcsim: a long poll did not end within %s of Close (two polls on one collector?); leaving it behind", closeWait)
		}
		s.timing.close(s.Model.Map())
		s.Model.Remove()
	})
}
