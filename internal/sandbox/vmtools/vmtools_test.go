package vmtools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/mo"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

const templatePassword = "Templ4te-Passw0rd"

// imageUnattend is an answer file the simulated sysprep accepts.
const imageUnattend = `<unattend xmlns="urn:schemas-microsoft-com:unattend"><settings pass="generalize"/></unattend>`

type world struct {
	ca    *pki.CA
	vc    *vcsim.Server
	hosts *vmtools.Hosts
	c     *vsphere.Client
}

func start(t *testing.T) *world {
	t.Helper()
	return startWith(t, nil)
}

// startWith starts the world with its hosts' options changed by opt.
func startWith(t *testing.T, opt func(*vmtools.Options)) *world {
	t.Helper()
	ca, err := pki.NewCA("guests-test")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.ServingCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	vc, err := vcsim.Start(t.Context(), vcsim.Options{Certificate: cert, RootCAs: ca.Pool(), User: "administrator@vsphere.local", Password: "Vc-Passw0rd!", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	opts := vmtools.Options{
		VSphere: vc, CA: ca, Dir: filepath.Join(t.TempDir(), "hosts"), AdminPassword: templatePassword,
		Ports: &winsim.Ports{WinRM: 5985, WinRMHTTPS: 5986, SSH: 2222}, RebootDelay: 200 * time.Millisecond, Logf: t.Logf,
	}
	if opt != nil {
		opt(&opts)
	}
	hosts, err := vmtools.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hosts.Close() })
	c, err := vsphere.NewClient(t.Context(), vsphere.Config{Server: vc.Server, User: vc.User, Password: vc.Password, CACertificate: string(ca.CertPEM)})
	if err != nil {
		t.Fatal(err)
	}
	return &world{ca: ca, vc: vc, hosts: hosts, c: c}
}

// clone clones the 2022 template as a node (sysprep with ip, or DHCP when ip is "").
func (w *world) clone(t *testing.T, name, computer, ip, password string) *vsphere.VM {
	t.Helper()
	ctx := t.Context()
	tmpl, err := w.c.FindVMByPath(ctx, w.vc.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	return w.cloneFrom(t, tmpl, name, computer, ip, password)
}

func (w *world) cloneFrom(t *testing.T, src vsphereRef, name, computer, ip, password string) *vsphere.VM {
	t.Helper()
	vm, err := w.tryClone(t.Context(), src, name, computer, ip, password)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// tryClone is cloneFrom for goroutines (no t.Fatal).
func (w *world) tryClone(ctx context.Context, src vsphereRef, name, computer, ip, password string) (*vsphere.VM, error) {
	folder, err := w.c.FindFolderByPath(ctx, w.vc.Folder, false)
	if err != nil {
		return nil, err
	}
	pool, err := w.c.FindResourcePoolByID(ctx, w.vc.ResourcePoolID)
	if err != nil {
		return nil, err
	}
	spec := vsphere.CloneSpec{Source: src, Name: name, Folder: folder, ResourcePool: pool}
	if computer != "" {
		spec.Sysprep = &vsphere.Sysprep{ComputerName: computer, AdminPassword: password}
		if ip != "" {
			spec.Sysprep.IPv4 = &vsphere.StaticIPv4{Address: ip, PrefixLength: 8}
		}
	}
	return w.c.Clone(ctx, spec)
}

type vsphereRef = mo.Reference

// connect opens WinRM to a guest as a stock Windows Server allows it: the
// HTTP listener, NTLM with message encryption (clones carry no HTTPS
// listener: the sandbox issues guests no certificate).
func (w *world) connect(t *testing.T, ip, password string) remote.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	tr, err := remote.Connect(ctx, remote.Config{Host: ip, User: "Administrator", Password: password, NTLM: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func run(t *testing.T, tr remote.Transport, script string) string {
	t.Helper()
	res, err := tr.Run(t.Context(), script)
	if err != nil {
		t.Fatalf("%s: %v (%+v)", script, err, res)
	}
	return strings.TrimSpace(res.Stdout)
}

func TestStaticIPClone(t *testing.T) {
	w := start(t)
	ctx := t.Context()
	vm := w.clone(t, "win-static", "WIN-STATIC", "127.0.10.1", "N0de-Passw0rd!")
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	ip, err := w.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
	if err != nil || ip != "127.0.10.1" {
		t.Fatalf("WaitForIP = %q, %v", ip, err)
	}
	tr := w.connect(t, ip, "N0de-Passw0rd!")
	if got := run(t, tr, `$env:COMPUTERNAME`); got != "WIN-STATIC" {
		t.Errorf("computer name = %q", got)
	}
	if got := run(t, tr, `(Get-ItemProperty -Path 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion').CurrentBuild`); got != "20348" {
		t.Errorf("build = %q, want 20348 (the 2022 template's)", got)
	}
	host := w.hosts.ByName("win-static")
	if host == nil || w.hosts.ByIP("127.0.10.1") != host || w.hosts.ByVM(vm.ID()) != host {
		t.Fatal("host lookups disagree")
	}
	if got := host.Config().BIOSUUID; !strings.EqualFold(got, vm.BIOSUUID) {
		t.Errorf("host BIOS UUID %s, VM %s", got, vm.BIOSUUID)
	}
	if host.Dir() != filepath.Join(w.hosts.Dir, "WIN-STATIC") {
		t.Errorf("host dir %s", host.Dir())
	}
	if _, err := os.Stat(filepath.Join(host.Dir(), "scripts.log")); err != nil {
		t.Errorf("scripts.log: %v", err)
	}

	// The template password is not the node's.
	bad, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := remote.Connect(bad, remote.Config{Host: ip, User: "Administrator", Password: templatePassword, NTLM: true}); err == nil {
		t.Error("the template password logs in to a customized clone")
	}

	// Power off stops the host; power on boots it again with the same identity.
	if err := w.c.PowerOff(ctx, vm); err != nil {
		t.Fatal(err)
	}
	waitGone(t, w, "WIN-STATIC")
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	h2, err := w.hosts.WaitFor(ctx, "WIN-STATIC")
	if err != nil || h2.IP() != "127.0.10.1" || h2.Config().AdminPassword != "N0de-Passw0rd!" {
		t.Fatalf("after power cycle: %v, %+v", err, h2)
	}

	// Destroy stops it and retires its directory.
	if err := w.c.Destroy(ctx, vm); err != nil {
		t.Fatal(err)
	}
	waitGone(t, w, "WIN-STATIC")
	if _, err := os.Stat(filepath.Join(w.hosts.Dir, "WIN-STATIC")); !os.IsNotExist(err) {
		t.Errorf("the destroyed VM's directory is still in place: %v", err)
	}
}

func waitGone(t *testing.T, w *world, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := w.hosts.WaitStopped(ctx, name); err != nil {
		t.Fatal(err)
	}
}

func TestDHCPClone(t *testing.T) {
	w := start(t)
	ctx := t.Context()
	vms := []*vsphere.VM{
		w.clone(t, "win-dhcp-0", "WIN-DHCP-0", "", "Dhcp-Passw0rd!"),
		w.clone(t, "win-dhcp-1", "WIN-DHCP-1", "", "Dhcp-Passw0rd!"),
	}
	seen := map[string]bool{}
	for i, vm := range vms {
		if err := w.c.PowerOn(ctx, vm); err != nil {
			t.Fatal(err)
		}
		ip, err := w.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ip, "127.") || seen[ip] {
			t.Fatalf("DHCP IP %q (seen %v)", ip, seen)
		}
		seen[ip] = true
		tr := w.connect(t, ip, "Dhcp-Passw0rd!")
		if got := run(t, tr, `hostname`); got != "WIN-DHCP-"+string(rune('0'+i)) {
			t.Errorf("hostname = %q", got)
		}
		info, err := w.c.ReadVM(ctx, vm)
		if err != nil {
			t.Fatal(err)
		}
		if info.GuestHostName != "WIN-DHCP-"+string(rune('0'+i)) || info.IP(vsphere.IPFilter{}) != ip {
			t.Errorf("vSphere reports %q / %q", info.GuestHostName, info.IP(vsphere.IPFilter{}))
		}
	}
}

func TestStaticIPOutsideLoopbackIsRefused(t *testing.T) {
	w := start(t)
	ctx := t.Context()
	tmpl, _ := w.c.FindVMByPath(ctx, w.vc.Templates["2022"])
	folder, _ := w.c.FindFolderByPath(ctx, w.vc.Folder, false)
	pool, _ := w.c.FindResourcePoolByID(ctx, w.vc.ResourcePoolID)
	_, err := w.c.Clone(ctx, vsphere.CloneSpec{Source: tmpl, Name: "win-bad", Folder: folder, ResourcePool: pool,
		Sysprep: &vsphere.Sysprep{ComputerName: "WIN-BAD", AdminPassword: "x", IPv4: &vsphere.StaticIPv4{Address: "10.0.0.5", PrefixLength: 24}}})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.0/8") {
		t.Fatalf("clone with 10.0.0.5: %v", err)
	}
	t.Log(err)
}

// TestGoldenImageFlow builds an image the way windows_golden_image does:
// a build VM that installs things and runs sysprep /shutdown, which powers
// it off; it becomes a template, and its clones carry what it installed.
// It starts from the prepared template, whose disk has OpenSSH Server (and
// so a host key the clones keep).
func TestGoldenImageFlow(t *testing.T) {
	w := start(t)
	ctx := t.Context()
	prepared, err := w.c.FindVMByPath(ctx, w.vc.Templates[vcsim.PreparedVersion])
	if err != nil {
		t.Fatal(err)
	}
	build := w.cloneFrom(t, prepared, "golden-build", "GOLDEN-BUILD", "", "Build-Passw0rd!")
	if err := w.c.PowerOn(ctx, build); err != nil {
		t.Fatal(err)
	}
	ip, err := w.c.WaitForIP(ctx, build, vsphere.IPFilter{})
	if err != nil {
		t.Fatal(err)
	}
	tr := w.connect(t, ip, "Build-Passw0rd!")
	run(t, tr, `New-Item -ItemType Directory -Force -Path 'C:\k' | Out-Null
Set-Content -Path 'C:\k\version.txt' -Value 'v1.36.3'
New-Item -ItemType Directory -Force -Path 'C:\Program Files\containerd\bin' | Out-Null
Set-Content -Path 'C:\Program Files\containerd\bin\containerd.exe' -Value 'MZ simulated Windows executable
containerd v1.7.24'
New-Service -Name 'containerd' -BinaryPathName '"C:\Program Files\containerd\bin\containerd.exe" --run-service' -StartupType Automatic`)
	// Restart-Computer keeps the VM on; vSphere sees VMware Tools stop and run again.
	if err := w.c.WaitForToolsRunning(ctx, build); err != nil {
		t.Fatal(err)
	}
	run(t, tr, `Restart-Computer -Force`)
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := w.c.WaitForGuestRestart(rctx, build); err != nil {
		t.Fatal(err)
	}
	_ = tr.Close() // the guest restarted under it
	tr = w.connect(t, ip, "Build-Passw0rd!")
	if info, _ := w.c.ReadVM(ctx, build); info.PowerState != vsphere.PoweredOn {
		t.Errorf("after Restart-Computer the VM is %s", info.PowerState)
	}
	buildKey := run(t, tr, `Get-Content -Path 'C:\ProgramData\ssh\ssh_host_ed25519_key.pub'`)
	// vCenter's customization left its sysprep.xml, and Setup its cached
	// copy, with the password the spec gave in plain text.
	for _, f := range []string{vmtools.SysprepAnswerFile, winsim.PantherAnswerFile} {
		if got := run(t, tr, `Get-Content -Raw -Path '`+f+`'`); !strings.Contains(got, "<Value>Build-Passw0rd!</Value>") || !strings.Contains(got, "<ComputerName>GOLDEN-BUILD</ComputerName>") {
			t.Errorf("%s after the customization = %q, want the spec's computer name and password", f, got)
		}
	}
	begin := time.Now()
	// The answer file first, as the bootstrap's sysprep step writes it:
	// the simulated sysprep refuses a missing one.
	run(t, tr, `[IO.File]::WriteAllText('C:\Windows\Temp\unattend.xml', '`+imageUnattend+`')
& 'C:\Windows\System32\Sysprep\sysprep.exe' /generalize /oobe /shutdown /quiet /unattend:C:\Windows\Temp\unattend.xml`)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.c.WaitForPowerState(wctx, build, vsphere.PoweredOff); err != nil {
		t.Fatal(err)
	}
	t.Logf("sysprep /shutdown to powered off: %s", time.Since(begin))
	waitGone(t, w, "GOLDEN-BUILD")
	if err := w.c.MarkAsTemplate(ctx, build); err != nil {
		t.Fatal(err)
	}
	// Setup cached the answer file sysprep was given, over the customization's.
	if b, err := os.ReadFile(filepath.Join(w.hosts.Dir, "GOLDEN-BUILD", "fs", "C", "Windows", "Panther", "unattend.xml")); err != nil || string(b) != imageUnattend {
		t.Errorf("the template's cached answer file = %q (%v), want sysprep's", b, err)
	}

	node := w.cloneFrom(t, build, "win-node", "WIN-NODE", "127.0.20.1", "N0de-Passw0rd!")
	if err := w.c.PowerOn(ctx, node); err != nil {
		t.Fatal(err)
	}
	ntr := w.connect(t, "127.0.20.1", "N0de-Passw0rd!")
	if got := run(t, ntr, `Get-Content -Path 'C:\k\version.txt'`); got != "v1.36.3" {
		t.Errorf("the clone's C:\\k\\version.txt = %q, want the image's", got)
	}
	if got := run(t, ntr, `(Get-Service -Name 'containerd').Status`); got != "Running" {
		t.Errorf("containerd on the clone: %q, want Running (Automatic)", got)
	}
	if got := run(t, ntr, `[Environment]::OSVersion.Version.ToString()`); !strings.HasPrefix(got, "10.0.20348.") {
		t.Errorf("clone build %q", got)
	}
	// The image's sysprep cached its answer file, which the clone inherits
	// until its own customization's replaces it; C:\Windows\Temp keeps ours.
	if got := run(t, ntr, `Get-Content -Raw -Path '`+winsim.PantherAnswerFile+`'`); !strings.Contains(got, "N0de-Passw0rd!") {
		t.Errorf("the clone's cached answer file = %q, want its customization's", got)
	}
	if got := run(t, ntr, `Get-Content -Raw -Path 'C:\Windows\Temp\unattend.xml'`); got != imageUnattend {
		t.Errorf("the image's answer file on the clone = %q", got)
	}
	// Sysprep keeps OpenSSH's host keys: a clone of an image that did not
	// remove them presents the image's.
	if got := run(t, ntr, `Get-Content -Path 'C:\ProgramData\ssh\ssh_host_ed25519_key.pub'`); got != buildKey || buildKey == "" {
		t.Errorf("the clone's host key %q, the image's %q: want the same", got, buildKey)
	}
}

func TestFaultsRegisteredBeforeBoot(t *testing.T) {
	w := start(t)
	ctx := t.Context()
	w.hosts.SetFaults("WIN-FAULTY", winsim.Faults{FailAuth: true})
	vm := w.clone(t, "win-faulty", "WIN-FAULTY", "127.0.30.1", "Fault-Passw0rd!")
	if err := w.c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hosts.WaitFor(ctx, "WIN-FAULTY"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := remote.Connect(cctx, remote.Config{Host: "127.0.30.1", User: "Administrator", Password: "Fault-Passw0rd!", NTLM: true})
	if err == nil {
		t.Fatal("logged in to a host that fails every authentication")
	}
	w.hosts.ClearFaults("WIN-FAULTY")
	w.connect(t, "127.0.30.1", "Fault-Passw0rd!")
}

// TestTwentyNodesAtParallelismTen is the sandbox side of creating 20 nodes at
// -parallelism=10: clone, power on, IP, WinRM session, for static and DHCP
// customizations alike.
func TestTwentyNodesAtParallelismTen(t *testing.T) {
	w := start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	tmpl, err := w.c.FindVMByPath(ctx, w.vc.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	sem := make(chan struct{}, 10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bootTotal time.Duration
	for i := range 20 {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			name := fmt.Sprintf("WIN-P%02d", i)
			ip := ""
			if i%2 == 0 {
				ip = fmt.Sprintf("127.0.50.%d", i+1)
			}
			vm, err := w.tryClone(ctx, tmpl, strings.ToLower(name), name, ip, "P4rallel-Passw0rd")
			if err != nil {
				t.Error(err)
				return
			}
			start := time.Now()
			if err := w.c.PowerOn(ctx, vm); err != nil {
				t.Error(err)
				return
			}
			got, err := w.c.WaitForIP(ctx, vm, vsphere.IPFilter{})
			if err != nil {
				t.Error(err)
				return
			}
			tr, err := remote.Connect(ctx, remote.Config{Host: got, User: "Administrator", Password: "P4rallel-Passw0rd", NTLM: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer func() { _ = tr.Close() }()
			mu.Lock()
			bootTotal += time.Since(start)
			mu.Unlock()
			if res, err := tr.Run(ctx, "hostname"); err != nil || strings.TrimSpace(res.Stdout) != name {
				t.Errorf("%s: hostname %q, %v", name, res.Stdout, err)
			}
		})
	}
	wg.Wait()
	t.Logf("20 nodes at parallelism 10: %s; power-on to WinRM session %s per node on average",
		time.Since(begin).Round(time.Millisecond), (bootTotal / 20).Round(time.Millisecond))
	if n := len(w.hosts.List()); n != 20 {
		t.Errorf("%d hosts run, want 20", n)
	}
}
