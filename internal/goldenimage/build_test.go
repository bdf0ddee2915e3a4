package goldenimage_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/guest/guesttest"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

var errBoom = errors.New("boom")

// fakeVSphere is an in-memory vCenter behind goldenimage's own VSphere
// interface: the build VM's life (cloned, powered on, restarted, powered
// off, a template, destroyed). Operations honour a cancelled context as a
// real client does, and fail with fail[op]; at[op] runs first.
type fakeVSphere struct {
	mu       sync.Mutex
	calls    []string
	fail     map[string]error
	at       map[string]func()
	exists   bool
	template bool
	facts    map[string]string
	// cloneErr: the clone made the VM but reports this (interrupted).
	cloneErr error
}

func (f *fakeVSphere) enter(ctx context.Context, op string) error {
	f.mu.Lock()
	f.calls = append(f.calls, op)
	hook, err := f.at[op], f.fail[op]
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (f *fakeVSphere) called(op string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.calls, op)
}

const buildVM = "vm-77"

func (f *fakeVSphere) CloneBuildVM(ctx context.Context, req goldenimage.CloneRequest) (goldenimage.VM, error) {
	if err := f.enter(ctx, "CloneBuildVM"); err != nil {
		return goldenimage.VM{}, err
	}
	f.exists = true
	return goldenimage.VM{ID: buildVM, Path: req.Folder + "/" + req.Name}, f.cloneErr
}

func (f *fakeVSphere) GuestOperations(vm goldenimage.VM) *remote.GuestOperations {
	return &remote.GuestOperations{}
}

func (f *fakeVSphere) PowerOn(ctx context.Context, _ goldenimage.VM) error {
	return f.enter(ctx, "PowerOn")
}

func (f *fakeVSphere) WaitForIP(ctx context.Context, _ goldenimage.VM) (string, error) {
	return "192.0.2.50", f.enter(ctx, "WaitForIP")
}

func (f *fakeVSphere) WaitForGuestRestart(ctx context.Context, _ goldenimage.VM) error {
	return f.enter(ctx, "WaitForGuestRestart")
}

func (f *fakeVSphere) WaitForPoweredOff(ctx context.Context, _ goldenimage.VM) error {
	return f.enter(ctx, "WaitForPoweredOff")
}

func (f *fakeVSphere) MarkAsTemplate(ctx context.Context, vm goldenimage.VM, facts map[string]string) (goldenimage.VM, error) {
	if err := f.enter(ctx, "MarkAsTemplate"); err != nil {
		return goldenimage.VM{}, err
	}
	f.template, f.facts = true, facts
	return vm, nil
}

func (f *fakeVSphere) Destroy(ctx context.Context, _ goldenimage.VM) error {
	if err := f.enter(ctx, "Destroy"); err != nil {
		return err
	}
	f.exists = false
	return nil
}

const adminPassword = "Templ4te-Passw0rd!"

func testRequest() goldenimage.Request {
	sum := strings.Repeat("ab", 32)
	art := func(name, url, path string) bootstrap.Artifact {
		return bootstrap.Artifact{Name: name, URL: url, SHA256: sum, Path: path}
	}
	containerd := "https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"
	cni := "https://example.com/cni-plugins-windows-amd64-v1.9.1.tgz"
	return goldenimage.Request{
		Clone:     goldenimage.CloneRequest{Source: "/dc/vm/base/ws2022", Name: "golden-2022", Folder: "/dc/vm/templates", ResourcePoolID: "resgroup-9"},
		Transport: remote.Config{Protocol: remote.ProtocolWinRM, HTTPS: true, User: "Administrator", Password: adminPassword},
		Image: bootstrap.ImageConfig{
			KubernetesVersion: "v1.36.3",
			Containerd:        bootstrap.Artifact{Name: "containerd", URL: containerd, SHA256: sum, Path: bootstrap.DownloadPath(containerd), ExtractTo: bootstrap.ContainerdDir},
			Kubelet:           art("kubelet", bootstrap.KubernetesArtifactURL("", "v1.36.3", "kubelet.exe"), bootstrap.KubeletExe),
			KubeProxy:         art("kube-proxy", bootstrap.KubernetesArtifactURL("", "v1.36.3", "kube-proxy.exe"), bootstrap.KubeProxyExe),
			KubeLogRunner:     art("kube-log-runner", bootstrap.KubernetesArtifactURL("", "v1.36.3", "kube-log-runner.exe"), bootstrap.KubeLogRunnerExe),
			CNIPlugins:        bootstrap.Artifact{Name: "cni-plugins", URL: cni, SHA256: sum, Path: bootstrap.DownloadPath(cni), ExtractTo: bootstrap.CNIBinDir},
		},
		Unattend: bootstrap.UnattendConfig{},
	}
}

const imageSteps = "prepare,agent-dirs,containers-feature,install-containerd,install-kubelet,install-kube-proxy,install-kube-log-runner,install-cni-plugins," +
	"containerd-service,vmware-tools,firewall,verify,windows-build"

// TestBuild fails an image build at every stage: the error names it (the
// texts the acceptance tests match), the build VM is reported before
// anything can fail and destroyed after a failure, even a cancelled one.
func TestBuild(t *testing.T) {
	cases := []struct {
		name  string
		setup func(vs *fakeVSphere, g *guesttest.Guest, req *goldenimage.Request, cancel func())
		want  string // regexp; "" for success
		noVM  bool   // fails before the build VM exists
		steps string // the guest's steps run, up to the failure
	}{
		{name: "builds", steps: imageSteps + ",sysprep"},
		{name: "image steps", setup: func(_ *fakeVSphere, _ *guesttest.Guest, r *goldenimage.Request, _ func()) {
			r.Image.KubernetesVersion = "1.36"
		},
			want: `^render image steps: kubernetes_version "1.36" is not a version like v1.36.3$`, noVM: true},
		{name: "clone", setup: func(vs *fakeVSphere, _ *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			vs.fail["CloneBuildVM"] = errBoom
		},
			want: `^cloning /dc/vm/base/ws2022: boom$`, noVM: true},
		{name: "clone interrupted after the VM exists", setup: func(vs *fakeVSphere, _ *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			vs.cloneErr = errors.New("cloning ws2022 to img was interrupted (context canceled) after vCenter created vm-77")
		},
			want: `^cloning /dc/vm/base/ws2022: cloning ws2022 to img was interrupted \(context canceled\) after vCenter created vm-77$`},
		{name: "power on", setup: func(vs *fakeVSphere, _ *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			vs.fail["PowerOn"] = errBoom
		},
			want: `^powering on the build VM: boom$`},
		{name: "IP", setup: func(vs *fakeVSphere, _ *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			vs.fail["WaitForIP"] = errBoom
		},
			want: `^waiting for the build VM's IP address: boom$`},
		{name: "connect", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			g.ConnectErrs = []error{errBoom}
		},
			want: `^connecting to the build VM: boom$`},
		{name: "step exits", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			g.Steps["install-kubelet"] = guesttest.Reply{ExitCode: 1, Stderr: "checksum mismatch for kubelet: expected ABAB, got 0000"}
		}, want: `^image step "install-kubelet" exited with code 1:\nchecksum mismatch for kubelet: expected ABAB, got 0000$`,
			steps: "prepare,agent-dirs,containers-feature,install-containerd,install-kubelet"},
		{name: "step transport", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			g.Steps["install-kubelet"] = guesttest.Reply{Err: errors.New("Unable to connect to the remote server")}
		}, want: `^image step "install-kubelet": Unable to connect to the remote server$`, steps: "prepare,agent-dirs,containers-feature,install-containerd,install-kubelet"},
		{name: "restart", setup: func(vs *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			g.Steps["containers-feature"] = guesttest.Reply{Stdout: bootstrap.RebootMarker}
			vs.fail["WaitForGuestRestart"] = errBoom
		}, want: `^waiting for the guest to restart after image step "containers-feature": boom$`, steps: "prepare,agent-dirs,containers-feature"},
		{name: "reconnect", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			g.Steps["containers-feature"] = guesttest.Reply{Stdout: bootstrap.RebootMarker}
			g.ConnectErrs = []error{nil, errBoom}
		}, want: `^reconnecting after the restart: boom$`, steps: "prepare,agent-dirs,containers-feature"},
		{name: "windows build", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			g.Steps["windows-build"] = guesttest.Reply{Stdout: "no build here\r\n"}
		}, want: `^image step "windows-build": the guest did not report its Windows build\n\nno build here$`, steps: imageSteps},
		{name: "sysprep", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			// The answer file holds no secret: the echoed line is shown.
			g.Steps["sysprep"] = guesttest.Reply{ExitCode: 1, Stderr: "Set-Content : The process cannot access the file because it is being used by another process.\n" +
				"+ Set-Content -Path 'C:\\Windows\\System32\\Sysprep\\unattend.xml' -Value x"}
		}, want: `^image step "sysprep" exited with code 1:\nSet-Content : .*being used by another process\.\n\+ Set-Content .* -Value x$`,
			steps: imageSteps + ",sysprep"},
		{name: "sysprep's shutdown takes the connection", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			// The guest powers off before the step's output is read: the
			// power-off is sysprep's success.
			g.Steps["sysprep"] = guesttest.Reply{Err: errors.New("reading the script's output: 503 Service Unavailable")}
		}, steps: imageSteps + ",sysprep"},
		{name: "sysprep lost its connection and the VM stays on", setup: func(vs *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			g.Steps["sysprep"] = guesttest.Reply{Err: errors.New("connection reset by peer")}
			vs.fail["WaitForPoweredOff"] = errBoom
		}, want: `^image step "sysprep": connection reset by peer; and the build VM did not power off within 10m0s as sysprep would have it: boom$`,
			steps: imageSteps + ",sysprep"},
		{name: "power-off", setup: func(vs *fakeVSphere, _ *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			vs.fail["WaitForPoweredOff"] = errBoom
		},
			want: `^waiting for sysprep to power the build VM off: boom$`, steps: imageSteps + ",sysprep"},
		{name: "template", setup: func(vs *fakeVSphere, _ *guesttest.Guest, _ *goldenimage.Request, _ func()) {
			vs.fail["MarkAsTemplate"] = errBoom
		},
			want: `^marking the build VM as a template: boom$`, steps: imageSteps + ",sysprep"},
		{name: "cancelled mid-step", setup: func(_ *fakeVSphere, g *guesttest.Guest, _ *goldenimage.Request, cancel func()) {
			g.Steps["install-containerd"] = guesttest.Reply{Do: func(context.Context) { cancel() }, Hang: true}
		}, want: `^image step "install-containerd": context canceled$`, steps: "prepare,agent-dirs,containers-feature,install-containerd"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := &fakeVSphere{fail: map[string]error{}, at: map[string]func(){}}
			g := guesttest.New()
			req := testRequest()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if c.setup != nil {
				c.setup(vs, g, &req, cancel)
			}
			var reported []goldenimage.VM
			req.OnBuildVM = func(vm goldenimage.VM) {
				if !slices.Equal(vs.calls, []string{"CloneBuildVM"}) {
					t.Errorf("OnBuildVM after %v: it must come before anything can fail", vs.calls)
				}
				reported = append(reported, vm)
			}
			res, err := goldenimage.Build(ctx, vs, g.Connect, req)
			if got := strings.Join(g.Ran(), ","); got != c.steps {
				t.Errorf("steps %s\nwant  %s", got, c.steps)
			}
			if g.Open() != 0 {
				t.Error("a transport was left open")
			}
			if (len(reported) == 1) == c.noVM {
				t.Errorf("build VM reported %d times", len(reported))
			}
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !vs.template || !vs.exists || res.BuildVM != nil {
					t.Errorf("template %v, VM exists %v, BuildVM %v", vs.template, vs.exists, res.BuildVM)
				}
				return
			}
			if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
				t.Fatalf("err:\n%v\nwant it to match %s", err, c.want)
			}
			var se *guest.StageError
			if !errors.As(err, &se) {
				t.Errorf("%T is not a *guest.StageError", err)
			}
			if strings.Contains(err.Error(), adminPassword) {
				t.Error("the administrator password leaks into the error")
			}
			if vs.exists || res.BuildVM != nil || vs.template {
				t.Errorf("after the failure: VM exists %v, BuildVM %v: want the build VM destroyed", vs.exists, res.BuildVM)
			}
		})
	}
}

// TestBuildResult: what a build records on the template, the reboot the
// Containers feature asks for (a new connection after VMware Tools restart),
// and the round trips.
func TestBuildResult(t *testing.T) {
	vs := &fakeVSphere{fail: map[string]error{}, at: map[string]func(){}}
	g := guesttest.New()
	g.Steps["containers-feature"] = guesttest.Reply{Stdout: "Installing...\r\n" + bootstrap.RebootMarker + "\r\n"}
	var stages []string
	req := testRequest()
	req.Progress = func(stage string, _ map[string]any) { stages = append(stages, stage) }
	res, err := goldenimage.Build(t.Context(), vs, g.Connect, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Configs()) != 2 || g.Configs()[1].Host != "192.0.2.50" || !vs.called("WaitForGuestRestart") {
		t.Errorf("connections %d, restart awaited %v: want a reconnection after the reboot", len(g.Configs()), vs.called("WaitForGuestRestart"))
	}
	if i := slices.Index(stages, "reboot"); i < 0 || stages[i-1] != "step containers-feature" {
		t.Errorf("progress %v: want the reboot after containers-feature", stages)
	}
	if res.WindowsBuildFull != guesttest.DefaultBuild || res.ContainerdVersion != "2.2.7" || res.RoundTrips != len(g.Ran()) {
		t.Errorf("result %+v (steps run %d)", res, len(g.Ran()))
	}
	want := map[string]string{
		"guestinfo.windows.build-full": guesttest.DefaultBuild, "guestinfo.kubernetes.version": "v1.36.3",
		"guestinfo.containerd.version": "2.2.7", "guestinfo.windows.image-manifest": res.Manifest,
	}
	for k, v := range want {
		if vs.facts[k] != v {
			t.Errorf("fact %s = %q, want %q", k, vs.facts[k], v)
		}
	}
	if !strings.Contains(res.Manifest, `"name":"kubelet"`) {
		t.Errorf("manifest %s", res.Manifest)
	}
}

// TestBuildKeepsOrReportsTheVM: a failed build VM is kept when asked, and
// named when it cannot be destroyed.
func TestBuildKeepsOrReportsTheVM(t *testing.T) {
	for _, c := range []struct {
		name    string
		keep    bool
		destroy error
		want    string
	}{
		{"kept for debugging", true, nil, `^powering on the build VM: boom$`},
		{"destroy fails", false, errors.New("vCenter busy"), `^powering on the build VM: boom \(and destroying the build VM vm-77 failed: vCenter busy\)$`},
	} {
		t.Run(c.name, func(t *testing.T) {
			vs := &fakeVSphere{fail: map[string]error{"PowerOn": errBoom, "Destroy": c.destroy}, at: map[string]func(){}}
			req := testRequest()
			req.KeepBuildVMOnFailure = c.keep
			res, err := goldenimage.Build(t.Context(), vs, guesttest.New().Connect, req)
			if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
				t.Fatalf("err = %v, want %s", err, c.want)
			}
			if res.BuildVM == nil || res.BuildVM.ID != buildVM || !vs.exists {
				t.Errorf("BuildVM %v, exists %v: want the VM named in the result", res.BuildVM, vs.exists)
			}
			if vs.called("Destroy") == c.keep {
				t.Errorf("Destroy called: %v", vs.called("Destroy"))
			}
		})
	}
}
