// Package goldenimage builds a Kubernetes-ready Windows Server template:
// clone a base image into a build VM, run the bootstrap's image steps over the
// transport, generalize it with sysprep, and mark the powered-off VM as a
// template. It orchestrates internal/vsphere (behind VSphere), internal/guest
// and internal/bootstrap and knows nothing of Terraform.
package goldenimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// VM identifies a virtual machine.
type VM struct {
	ID   string // managed object id, e.g. "vm-42"
	Path string // inventory path
}

// VSphere is what a build needs of vCenter.
type VSphere interface {
	// CloneBuildVM clones the source into a powered-off build VM.
	CloneBuildVM(ctx context.Context, req CloneRequest) (VM, error)
	PowerOn(ctx context.Context, vm VM) error
	// WaitForIP waits (property collector) for the guest's IPv4 address.
	WaitForIP(ctx context.Context, vm VM) (string, error)
	// WaitForGuestRestart waits for VMware Tools to stop and run again, which
	// is how vSphere sees a guest reboot.
	WaitForGuestRestart(ctx context.Context, vm VM) error
	// WaitForPoweredOff waits for the guest to power the VM off (sysprep).
	WaitForPoweredOff(ctx context.Context, vm VM) error
	// MarkAsTemplate records facts (extraConfig) on the powered-off VM and
	// turns it into a template.
	MarkAsTemplate(ctx context.Context, vm VM, facts map[string]string) (VM, error)
	Destroy(ctx context.Context, vm VM) error
	// GuestOperations is the way into the VM's guest through vCenter, for
	// the vmtools transport.
	GuestOperations(vm VM) *remote.GuestOperations
}

// CloneRequest places the build VM.
type CloneRequest struct {
	Source         string // inventory path or managed object id
	Name           string
	Folder         string
	ResourcePoolID string
	DatastoreID    string
	NetworkID      string
	HostID         string
	// DatastoreClusterID and StoragePolicyID: Storage DRS placement and a
	// storage policy (vsphere.CloneSpec); Metadata is set right after the
	// clone, and the template keeps it.
	DatastoreClusterID, StoragePolicyID string
	Metadata                            vsphere.Metadata
}

// Request is one image build.
type Request struct {
	Clone     CloneRequest
	Transport remote.Config // Host is filled in from the guest's IP
	Image     bootstrap.ImageConfig
	Unattend  bootstrap.UnattendConfig
	// KeepBuildVMOnFailure leaves a failed build VM for debugging.
	KeepBuildVMOnFailure bool
	// OnBuildVM is called as soon as the build VM exists, before anything can
	// fail, so the caller records it (a VM that exists is in the state).
	OnBuildVM func(VM)
	// Progress receives one line per stage, for TF_LOG=info.
	Progress func(stage string, fields map[string]any)
}

// Result is a finished template.
type Result struct {
	Template          VM
	WindowsBuildFull  string // 10.0.20348.2340
	ContainerdVersion string
	Manifest          string // JSON: [{name, url, sha256, path}] and the updates [{name: KB, url, sha256, kind}]
	// InstalledUpdates are the KBs of Image.Updates as the guest listed
	// them installed after their steps (Get-HotFix, the
	// windows-updates-installed step), then those the online updates
	// installed as the Windows Update Agent reported them, in order.
	InstalledUpdates []string
	// BuildVM is the failed build VM that was kept (KeepBuildVMOnFailure).
	BuildVM *VM
	// RoundTrips counts transport operations (script runs).
	RoundTrips int
	// SSHHostKey is the SSH host key the build VM presented and the
	// transport trusted (authorized_keys format); "" over WinRM.
	SSHHostKey string
	Elapsed    time.Duration
}

// Build runs a whole image build. On failure the build VM is destroyed unless
// KeepBuildVMOnFailure, in which case Result.BuildVM names it. A failure is
// a *guest.StageError naming the stage (`image step "install-kubelet"` for
// a step).
func Build(ctx context.Context, vs VSphere, connect guest.Connector, req Request) (res Result, err error) {
	start := time.Now()
	// Each stage is reported again while it lasts (an update's install
	// takes up to 40 minutes, internal/sandbox/latency's UpdateInstall).
	progress, stopProgress := guest.KeepProgress(req.Progress)
	defer stopProgress()
	steps, err := bootstrap.ImageSteps(req.Image)
	if err != nil {
		return res, guest.Stage("render image steps", err)
	}
	sysprep, err := bootstrap.SysprepStep(req.Unattend)
	if err != nil {
		return res, guest.Stage("render sysprep step", err)
	}

	progress("clone", map[string]any{"source": req.Clone.Source, "name": req.Clone.Name})
	vm, err := vs.CloneBuildVM(ctx, req.Clone)
	if err != nil && vm.ID == "" {
		return res, guest.Stage("cloning "+req.Clone.Source, err)
	}
	if req.OnBuildVM != nil {
		req.OnBuildVM(vm)
	}
	cloneErr := err
	defer func() {
		if err == nil {
			return
		}
		if req.KeepBuildVMOnFailure {
			res.BuildVM = &vm
			return
		}
		// The build failed: the VM goes, even if the caller's context is done.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		if derr := vs.Destroy(cleanup, vm); derr != nil {
			res.BuildVM = &vm
			err = fmt.Errorf("%w (and destroying the build VM %s failed: %v)", err, vm.ID, derr)
		}
	}()

	if cloneErr != nil {
		// The clone was interrupted once vCenter had made the VM (or its
		// identity could not be read): tracked, then cleaned up as any
		// failed build's.
		return res, guest.Stage("cloning "+req.Clone.Source, cloneErr)
	}

	progress("power on", map[string]any{"vm": vm.ID})
	if err := vs.PowerOn(ctx, vm); err != nil {
		return res, guest.Stage("powering on the build VM", err)
	}
	progress("wait for IP", map[string]any{"vm": vm.ID})
	ip, err := vs.WaitForIP(ctx, vm)
	if err != nil {
		return res, guest.Stage("waiting for the build VM's IP address", err)
	}
	tcfg := req.Transport
	tcfg.Host = ip
	if tcfg.Protocol == remote.ProtocolVMTools {
		tcfg.Guest = vs.GuestOperations(vm)
	}
	progress("connect", map[string]any{"host": ip, "protocol": string(tcfg.Protocol)})
	g, err := guest.Connect(ctx, connect, tcfg, "image")
	if err != nil {
		return res, guest.Stage("connecting to the build VM", err)
	}
	defer func() { res.RoundTrips = g.Runs(); _ = g.Close() }()
	res.SSHHostKey = g.HostKey()

	var build string
	var online []bootstrap.InstalledOnline
	var listed []string
	for _, step := range steps {
		progress("step "+step.Name, nil)
		out, err := g.Run(ctx, step)
		if err != nil {
			return res, err
		}
		if step.Name == bootstrap.UpdatesInstalledStepName {
			listed = bootstrap.ParseInstalledUpdates(out)
			if err := checkInstalled(req.Image.Updates, listed); err != nil {
				return res, &guest.StageError{Stage: fmt.Sprintf("image step %q", step.Name), Err: err, Evidence: remote.LastLines(out, 5)}
			}
		}
		if step.Name == bootstrap.OnlineUpdateStepName {
			online = append(online, bootstrap.ParseOnlineUpdates(out)...)
		}
		// A step that repeats runs again after each restart it asks for
		// (the online updates: each round's search finds what applies
		// once the last round is installed), a bounded number of times.
		for round := 1; guest.RebootRequested(step, out); round++ {
			progress("reboot", map[string]any{"step": step.Name})
			if err := g.Reboot(ctx, func(ctx context.Context) error { return vs.WaitForGuestRestart(ctx, vm) }); err != nil {
				return res, err
			}
			if !step.RepeatAfterReboot {
				break
			}
			if round >= bootstrap.OnlineUpdateRounds {
				return res, guest.Stage(fmt.Sprintf("image step %q", step.Name),
					fmt.Errorf("updates still ask for a restart after %d rounds", round))
			}
			progress("step "+step.Name, map[string]any{"round": round + 1})
			if out, err = g.Run(ctx, step); err != nil {
				return res, err
			}
			online = append(online, bootstrap.ParseOnlineUpdates(out)...)
		}
		if step.Name == "windows-build" {
			if build, err = bootstrap.ParseWindowsBuild(out); err != nil {
				return res, &guest.StageError{Stage: fmt.Sprintf("image step %q", step.Name), Err: err, Evidence: remote.LastLines(out, 5)}
			}
		}
	}

	progress("sysprep", nil)
	if _, err := g.Run(ctx, sysprep); err != nil {
		if err := sysprepWentAway(ctx, vs, vm, err); err != nil {
			return res, err
		}
	} else {
		progress("wait for power-off", map[string]any{"vm": vm.ID})
		if err := vs.WaitForPoweredOff(ctx, vm); err != nil {
			return res, guest.Stage("waiting for sysprep to power the build VM off", err)
		}
	}
	res.WindowsBuildFull = build
	res.ContainerdVersion = bootstrap.ContainerdVersion(req.Image.Containerd.URL)
	res.Manifest = manifest(req.Image, online)
	for _, u := range req.Image.Updates {
		// checkInstalled made sure the guest listed each of them.
		if i := slices.IndexFunc(listed, func(kb string) bool { return strings.EqualFold(kb, u.KB) }); i >= 0 {
			res.InstalledUpdates = append(res.InstalledUpdates, listed[i])
		}
	}
	for _, u := range online {
		res.InstalledUpdates = append(res.InstalledUpdates, u.KB)
	}
	progress("mark as template", map[string]any{"vm": vm.ID})
	tmpl, err := vs.MarkAsTemplate(ctx, vm, map[string]string{
		keyWindowsBuild: build, keyKubernetesVersion: req.Image.KubernetesVersion,
		keyContainerdVersion: res.ContainerdVersion, keyManifest: res.Manifest,
	})
	if err != nil {
		return res, guest.Stage("marking the build VM as a template", err)
	}
	res.Template = tmpl
	res.Elapsed = time.Since(start)
	return res, nil
}

type manifestEntry struct {
	Name   string `json:"name"`
	URL    string `json:"url,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Path   string `json:"path,omitempty"`
	// Kind is "windows-update" for an update (Name is its KB).
	Kind string `json:"kind,omitempty"`
	// Source is where an online update came from: "windows-update" (the
	// agent's default service) or the WSUS URL; Size its download size in
	// bytes and Title its title, as the agent reported them.
	Source string `json:"source,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Title  string `json:"title,omitempty"`
}

// manifest lists every installed artifact, for the resource's manifest
// output: the files, then the update packages, then the online updates.
func manifest(cfg bootstrap.ImageConfig, online []bootstrap.InstalledOnline) string {
	var entries []manifestEntry
	for _, a := range append([]bootstrap.Artifact{cfg.Containerd, cfg.Kubelet, cfg.KubeProxy, cfg.CNIPlugins}, cfg.Additional...) {
		sum, _ := bootstrap.NormalizeSHA256(a.SHA256)
		entries = append(entries, manifestEntry{Name: a.Name, URL: a.URL, SHA256: sum, Path: a.Path})
	}
	for _, u := range cfg.Updates {
		sum, _ := bootstrap.NormalizeSHA256(u.SHA256)
		entries = append(entries, manifestEntry{Name: u.KB, URL: u.URL, SHA256: sum, Kind: "windows-update"})
	}
	source := "windows-update"
	if cfg.Online != nil && cfg.Online.WSUSServer != "" {
		source = cfg.Online.WSUSServer
	}
	for _, u := range online {
		entries = append(entries, manifestEntry{Name: u.KB, Kind: "windows-update", Source: source, Size: u.Size, Title: u.Title})
	}
	b, _ := json.Marshal(entries)
	return string(b)
}

// InstalledUpdates reads the KBs a manifest records, in their order.
func InstalledUpdates(manifest string) []string {
	var entries []manifestEntry
	if json.Unmarshal([]byte(manifest), &entries) != nil {
		return nil
	}
	var kbs []string
	for _, e := range entries {
		if e.Kind == "windows-update" {
			kbs = append(kbs, e.Name)
		}
	}
	return kbs
}

// sysprepPowerOffWait bounds the wait for the power-off after the sysprep
// step lost its connection: sysprep has generalized the image by then
// (the step's process ended or the guest went away under it); what is left
// is Windows shutting down.
const sysprepPowerOffWait = 10 * time.Minute

// sysprepWentAway judges a sysprep step that failed without an exit code of
// its own. sysprep /shutdown powers the guest off as soon as it has
// generalized it, and the connection can go with it before the step's
// output is read (WinRM's connection reset; vCenter's guest file transfer
// refused: the guest is not running). Packer expects the same of a
// shutdown_command and waits for the power-off instead. So does this: the
// build VM powering off is sysprep's success; a step that exited non-zero,
// or a VM that stays on, is its failure.
func sysprepWentAway(ctx context.Context, vs VSphere, vm VM, stepErr error) error {
	var se *guest.StageError
	if errors.As(stepErr, &se) && se.ExitCode != 0 || ctx.Err() != nil {
		return stepErr
	}
	wctx, cancel := context.WithTimeout(ctx, sysprepPowerOffWait)
	defer cancel()
	if err := vs.WaitForPoweredOff(wctx, vm); err != nil {
		return fmt.Errorf("%w; and the build VM did not power off within %s as sysprep would have it: %w", stepErr, sysprepPowerOffWait, err)
	}
	return nil
}

// checkInstalled names every update package of the image that the guest's
// read-back (Get-HotFix) does not list: its installer reported success, but
// Windows does not have it.
func checkInstalled(updates []bootstrap.WindowsUpdate, listed []string) error {
	var missing []string
	for _, u := range updates {
		if !slices.ContainsFunc(listed, func(kb string) bool { return strings.EqualFold(kb, u.KB) }) {
			missing = append(missing, u.KB)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("update %s is not installed: its installer reported success, but Get-HotFix on the build VM does not list it (installed: %s)",
			strings.Join(missing, ", "), strings.Join(listed, ", "))
	}
	return nil
}
