package winsim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// Host is one simulated Windows Server host.
type Host struct {
	cfg      HostConfig
	fs       *vfs
	svcs     *serviceTable
	reg      *registry
	scm      *scm
	features *featureTable
	// servicing is the CBS store of the updates DISM and wusa installed (servicing.go).
	servicing *servicingStore
	images    *imageStore
	// tasks are the Task Scheduler's registered tasks (tasks.go).
	tasks  taskTable
	fwMu   sync.Mutex // firewall.json
	log    *scriptLog
	events eventLogs // the Windows event logs (scriptblocklog.go)
	wsman  *wsmanServer
	gprocs guestProcesses // started by guest operations (guestops.go)
	tools  toolsState     // VMware Tools running (stock_services.go, guestops.go)

	tlsConfig *tls.Config
	// certMu guards httpsCert, the certificate the HTTPS listener serves
	// (certstore.go); httpsPort is the port an HTTPS listener created at
	// run time binds (New-WSManInstance), and httpsServing says one is
	// served now.
	certMu       sync.Mutex
	httpsCert    *tls.Certificate
	httpsPort    int
	httpsServing bool

	mu     sync.Mutex
	faults Faults
	fired  map[int]int // StepFault index -> times fired
	up     bool
	// bootID is new at every boot (BootID).
	bootID  string
	stopped bool
	stopCh  chan struct{} // closed at Stop: a reboot's wait ends
	ports   Ports         // bound ports (0 = disabled)
	// configured are the ports the host was started with, before its disk
	// decided which listeners exist: the firewall drops connections to
	// them where no rule admits them, listener or not (firewall_drop.go).
	configured Ports
	dropped    map[string]*droppedPort // by listener name, while up
	servers    []*http.Server
	httpServer *http.Server // the WinRM HTTP listener's, among servers; Remove-WSManInstance closes it
	sshLn      net.Listener
	// sshPasswordOff is sshd_config's PasswordAuthentication no, as sshd
	// read it at its last start (sshd_config.go).
	sshPasswordOff atomic.Bool
	sshConns       map[net.Conn]struct{}
	upCtx          context.Context // cancelled when the host goes down
	upCancel       context.CancelFunc
	upCh           chan struct{} // closed while the host is up
	timers         []*time.Timer
	wg             sync.WaitGroup
	// backgroundRuns counts the programs running in the background (background.go).
	backgroundRuns sync.WaitGroup
}

// Start boots a simulated host: it binds its listeners (ports 0 become free
// ports, fixed from then on, across reboots) and serves WinRM and SSH. ctx
// bounds the start only; the host runs until Stop.
func Start(ctx context.Context, cfg HostConfig) (*Host, error) {
	cfg.setDefaults()
	if cfg.Dir == "" {
		return nil, errors.New("winsim: HostConfig.Dir is required (the host's on-disk root)")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	httpsPort := cfg.Ports.WinRMHTTPS
	configured := *cfg.Ports
	if in, ok, err := readInstallation(cfg.Dir); err != nil {
		return nil, fmt.Errorf("winsim: the listeners of %s: %w", cfg.ComputerName, err)
	} else if ok {
		cfg.applyInstallation(in)
	}
	profile := `C:\Users\` + cfg.AdminUser
	env := map[string]string{
		"COMPUTERNAME": cfg.ComputerName, "USERNAME": cfg.AdminUser, "USERDOMAIN": cfg.ComputerName,
		"USERPROFILE": profile, "HOMEDRIVE": "C:", "HOMEPATH": `\Users\` + cfg.AdminUser,
		"TEMP": profile + `\AppData\Local\Temp`, "TMP": profile + `\AppData\Local\Temp`,
		"SystemRoot": `C:\Windows`, "windir": `C:\Windows`, "SystemDrive": "C:",
		"ProgramFiles": `C:\Program Files`, "ProgramData": `C:\ProgramData`,
		"ProgramFiles(x86)": `C:\Program Files (x86)`, "APPDATA": profile + `\AppData\Roaming`,
		"LOCALAPPDATA": profile + `\AppData\Local`, "OS": "Windows_NT",
	}
	fs, err := newVFS(filepath.Join(cfg.Dir, "fs"), env)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{env["TEMP"], `C:\Windows\Temp`, `C:\Windows\System32`, `C:\Program Files`, `C:\ProgramData`} {
		if err := fs.MkdirAll(d); err != nil {
			return nil, fmt.Errorf("winsim: creating %s: %w", d, err)
		}
	}
	reg, err := loadRegistry(filepath.Join(cfg.Dir, "registry.json"))
	if err != nil {
		return nil, fmt.Errorf("winsim: %w", err)
	}
	features, err := loadFeatures(filepath.Join(cfg.Dir, "features.json"))
	if err != nil {
		return nil, fmt.Errorf("winsim: %w", err)
	}
	servicing, err := loadServicing(filepath.Join(cfg.Dir, "servicing.json"))
	if err != nil {
		return nil, fmt.Errorf("winsim: %w", err)
	}
	h := &Host{
		stopCh:     make(chan struct{}),
		cfg:        cfg,
		servicing:  servicing,
		fs:         fs,
		reg:        reg,
		scm:        &scm{},
		features:   features,
		images:     &imageStore{path: filepath.Join(cfg.Dir, "images.json")},
		log:        &scriptLog{path: filepath.Join(cfg.Dir, "scripts.log")},
		faults:     cfg.Faults,
		fired:      map[int]int{},
		sshConns:   map[net.Conn]struct{}{},
		upCh:       make(chan struct{}),
		httpsPort:  httpsPort,
		configured: configured,
		dropped:    map[string]*droppedPort{},
	}
	h.svcs = &serviceTable{reg: reg, status: h.scm.status}
	if err := h.seedRegistry(); err != nil {
		return nil, fmt.Errorf("winsim: writing the registry: %w", err)
	}
	if err := h.seedTimeZone(); err != nil {
		return nil, fmt.Errorf("winsim: writing the registry: %w", err)
	}
	if err := h.svcs.importServicesJSON(filepath.Join(cfg.Dir, "services.json")); err != nil {
		return nil, fmt.Errorf("winsim: %w", err)
	}
	h.wsman = newWSManServer(h)
	if h.tlsConfig, err = h.newTLSConfig(); err != nil {
		return nil, fmt.Errorf("winsim: TLS for %s: %w", cfg.ComputerName, err)
	}
	if cfg.Ports.SSH != PortDisabled {
		// sshd's first start makes its host keys (none without OpenSSH Server).
		h.loadSSHDConfig()
		if _, err := h.loadSSHHostKey(cfg.SSHHostKeyPEM); err != nil {
			return nil, fmt.Errorf("winsim: SSH host key of %s: %w", cfg.ComputerName, err)
		}
		if _, err := h.connSSHConfig(); err != nil {
			return nil, fmt.Errorf("winsim: SSH for %s: %w", cfg.ComputerName, err)
		}
	}
	if err := h.bind(); err != nil {
		return nil, err
	}
	if cfg.BootDelay > 0 || h.faults.RefuseConnections {
		h.goDown()
		if !h.faults.RefuseConnections {
			h.after(cfg.BootDelay, h.comeUp)
		}
	} else {
		h.bootServicing()
		h.stateChanged(true)
		h.bootServices()
	}
	return h, nil
}

// bind opens the listeners for the first time, fixing the ports chosen for 0.
func (h *Host) bind() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	want := *h.cfg.Ports
	lns := map[string]net.Listener{}
	for _, p := range []struct {
		name string
		port int
		dst  *int
	}{{"winrm-http", want.WinRM, &h.ports.WinRM}, {"winrm-https", want.WinRMHTTPS, &h.ports.WinRMHTTPS}, {"ssh", want.SSH, &h.ports.SSH}} {
		if p.port == PortDisabled {
			continue
		}
		ln, err := listenTCP(net.JoinHostPort(h.cfg.IP, strconv.Itoa(p.port)))
		if err != nil {
			for _, l := range lns {
				_ = l.Close() // the listen error is the one to report
			}
			return fmt.Errorf("winsim: %s listener for %s on %s port %d: %w", p.name, h.cfg.ComputerName, h.cfg.IP, p.port, err)
		}
		*p.dst = ln.Addr().(*net.TCPAddr).Port
		lns[p.name] = ln
	}
	h.serveLocked(lns)
	h.bootID = newGUID() // the first boot; comeUp's are the later ones
	return nil
}

// comeUp reopens the listeners on the bound ports and starts the automatic services.
func (h *Host) comeUp() {
	// Startup processing completes pending updates before anything serves
	// (servicing.go).
	h.bootServicing()
	// sshd starts with the machine and creates host keys that went missing;
	// if it cannot, connections find no key and close (connSSHConfig).
	if h.cfg.Ports.SSH != PortDisabled {
		h.loadSSHDConfig()
		_ = h.createSSHHostKey()
	}
	h.mu.Lock()
	if h.up || h.stopped || h.faults.RefuseConnections {
		h.mu.Unlock()
		return
	}
	lns := map[string]net.Listener{}
	for name, port := range map[string]int{"winrm-http": h.ports.WinRM, "winrm-https": h.ports.WinRMHTTPS, "ssh": h.ports.SSH} {
		if port == 0 {
			continue
		}
		var ln net.Listener
		var err error
		// The old socket may linger for a moment after a reboot's close.
		for i := 0; i < 50; i++ {
			if ln, err = listenTCP(net.JoinHostPort(h.cfg.IP, strconv.Itoa(port))); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			continue // that service stays unreachable, as a broken listener would
		}
		lns[name] = ln
	}
	h.serveLocked(lns)
	h.bootID = newGUID()
	h.mu.Unlock()
	h.stateChanged(true)
	h.bootServices()
}

// stateChanged tells HostConfig.OnStateChange.
func (h *Host) stateChanged(up bool) {
	if h.cfg.OnStateChange != nil {
		h.cfg.OnStateChange(h, up)
	}
}

func (h *Host) serveLocked(lns map[string]net.Listener) {
	h.upCtx, h.upCancel = context.WithCancel(context.Background())
	h.up = true
	close(h.upCh)
	h.servers = nil
	for _, name := range []string{"winrm-http", "winrm-https", "ssh"} {
		ln := lns[name]
		if !h.scopeLocked(name, ln) {
			continue // blocked: connection attempts go unanswered
		}
		if ln == nil {
			continue // no listener: an admitted port refuses connections
		}
		switch name {
		case "winrm-http", "winrm-https":
			h.serveWSManLocked(name, ln)
		case "ssh":
			h.sshLn = ln
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				h.serveSSH(ln)
			}()
		}
	}
}

// serveWSManLocked serves a WinRM listener on ln.
func (h *Host) serveWSManLocked(name string, ln net.Listener) {
	if name == "winrm-https" {
		ln = tls.NewListener(ln, h.tlsConfig)
		h.httpsServing = true
	}
	srv := &http.Server{
		Handler:           h.wsmanHandler(name),
		ConnContext:       withConnState,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          discardLogger,
	}
	h.servers = append(h.servers, srv)
	if name == "winrm-http" {
		h.httpServer = srv
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		_ = srv.Serve(ln)
	}()
}

// goDown closes every listener and connection, cancels running scripts and
// stops the services, like a powered-off or rebooting machine.
func (h *Host) goDown() {
	h.mu.Lock()
	if !h.up {
		h.mu.Unlock()
		return
	}
	h.up = false
	h.httpsServing = false
	h.upCh = make(chan struct{})
	h.upCancel()
	servers, sshLn := h.servers, h.sshLn
	conns := h.sshConns
	h.servers, h.sshLn, h.sshConns = nil, nil, map[net.Conn]struct{}{}
	h.httpServer = nil
	for name := range h.dropped {
		h.undropLocked(name) // a host that is down answers nothing on any port
	}
	h.mu.Unlock()
	for _, s := range servers {
		_ = s.Close()
	}
	if sshLn != nil {
		_ = sshLn.Close()
	}
	for c := range conns {
		_ = c.Close()
	}
	h.wsman.reset()
	h.stopAllServices()
	h.stateChanged(false)
}

// Reboot takes the host down, waits RebootDelay and brings it back. It blocks
// until the host is up again (or stopped).
func (h *Host) Reboot() {
	d := h.cfg.RebootDelay
	if h.updatePending() && h.cfg.Latency.On() {
		// "Working on updates" before and after the reboot.
		d = h.cfg.Latency.Of(latency.UpdateRestart)
	}
	h.goDown()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-h.stopCh:
		return
	}
	h.comeUp()
}

// Stop shuts the host down for good. The on-disk state under Dir stays.
func (h *Host) Stop() error {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil
	}
	h.stopped = true
	close(h.stopCh)
	for _, t := range h.timers {
		t.Stop()
	}
	h.mu.Unlock()
	h.goDown()
	h.wg.Wait()
	return nil
}

// spawn runs fn in a goroutine that Stop waits for, unless the host is
// stopped already (then it reports false and fn does not run). Scripts and
// guest programs write into Dir: a caller that removes Dir after Stop (a
// test's TempDir) must not race a command still running there.
func (h *Host) spawn(fn func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	h.wg.Add(1) // under h.mu, so never after Stop began to Wait
	go func() {
		defer h.wg.Done()
		fn()
	}()
	return true
}

// after runs fn after d unless the host is stopped first.
func (h *Host) after(d time.Duration, fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timers = append(h.timers, time.AfterFunc(d, fn))
}

// WaitUp blocks until the host serves connections.
func (h *Host) WaitUp(ctx context.Context) error {
	for {
		h.mu.Lock()
		up, ch := h.up, h.upCh
		h.mu.Unlock()
		if up {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Up reports whether the host is serving.
func (h *Host) Up() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.up
}

// UpContext ends when the host's current boot does (a shutdown, a restart,
// a power-off): what Windows keeps running on its own once a program has
// started it, such as containerd's shims and the containers they hold,
// lives that long and no longer. A host that is down gives an ended context.
func (h *Host) UpContext() context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.up || h.upCtx == nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	return h.upCtx
}

// BootID identifies the host's current boot: a new one at every boot (the
// first, a Restart-Computer, the VM powered on again), as the kernel's boot
// session is new. Programs keep what Windows holds only in memory (HNS's
// non-persistent networks: kubeletsim) with the boot it belongs to.
func (h *Host) BootID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bootID
}

// Config returns the host's configuration (with defaults filled in).
func (h *Host) Config() HostConfig { return h.cfg }

// ComputerName is the host's Windows computer name.
func (h *Host) ComputerName() string { return h.cfg.ComputerName }

// IP is the address the host listens on.
func (h *Host) IP() string { return h.cfg.IP }

// Ports returns the bound ports (0 for a disabled listener).
func (h *Host) Ports() Ports {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ports
}

// Dir is the host's on-disk root.
func (h *Host) Dir() string { return h.cfg.Dir }

// Scripts returns the scripts received so far (recent ones, oldest first).
func (h *Host) Scripts() []ScriptRecord { return h.log.list() }

// ReadFile reads a file of the virtual filesystem ("C:\k\kubelet.exe").
func (h *Host) ReadFile(path string) ([]byte, error) { return h.fs.ReadFile(path) }

// WriteFile writes a file of the virtual filesystem, creating parents.
func (h *Host) WriteFile(path string, data []byte) error { return h.fs.WriteFile(path, data, false) }

// Rename renames a file of the virtual filesystem, replacing one at to (Go's
// os.Rename on Windows, MoveFileEx with MOVEFILE_REPLACE_EXISTING): how a
// program makes a file appear whole.
func (h *Host) Rename(from, to string) error { return h.fs.Move(from, to, true) }

// RemoveFile deletes a file (a program's pidfile or socket as it exits).
func (h *Host) RemoveFile(path string) error { return h.fs.Remove(path, false) }

// FileExists reports whether a file or directory exists.
func (h *Host) FileExists(path string) bool {
	ok, _ := h.fs.Stat(path)
	return ok
}

// DiskPath is where a virtual path is mirrored on disk.
func (h *Host) DiskPath(path string) string { return h.fs.resolve(path) }

// Services returns the service table.
func (h *Host) Services() []Service { return h.svcs.list() }

// Service returns one service.
func (h *Host) Service(name string) (Service, bool) { return h.svcs.get(name) }

// currentVersion is the CurrentVersionKey registry key's values, as the
// registry holds them (seedRegistry writes them from the configuration).
func (h *Host) currentVersion() map[string]string {
	vals, _ := h.reg.values(CurrentVersionKey)
	out := make(map[string]string, len(vals))
	for n, v := range vals {
		out[n] = v.String()
	}
	return out
}

// currentVersionValues are the CurrentVersion values of the configured build.
func (h *Host) currentVersionValues() map[string]string {
	build := h.cfg.WindowsBuild
	if i := strings.LastIndexByte(build, '.'); i >= 0 {
		build = build[i+1:]
	}
	product := "Windows Server 2022 Datacenter"
	switch {
	case build == "17763":
		product = "Windows Server 2019 Datacenter"
	case build >= "26100":
		product = "Windows Server 2025 Datacenter"
	}
	return map[string]string{
		"CurrentBuild": build, "CurrentBuildNumber": build, "UBR": strconv.Itoa(h.UBR()),
		"ProductName": product, "EditionID": "ServerDatacenter", "InstallationType": "Server",
		"CurrentMajorVersionNumber": "10", "CurrentMinorVersionNumber": "0",
	}
}

// discardLogger silences net/http's per-connection errors (TLS handshakes
// refused by tests, dropped connections during reboots).
var discardLogger = log.New(io.Discard, "", 0)
