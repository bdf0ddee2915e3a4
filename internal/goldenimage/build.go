// Package goldenimage builds a Kubernetes-ready Windows Server template:
// clone a base image into a build VM, run the bootstrap's image steps over the
// transport, generalize it with sysprep, and mark the powered-off VM as a
// template. It orchestrates internal/vsphere, internal/remote and
// internal/bootstrap and knows nothing of Terraform.
package goldenimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
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
}

// Connector opens a transport to the guest (remote.Connect in production).
type Connector func(ctx context.Context, cfg remote.Config) (remote.Transport, error)

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
	Manifest          string // JSON: [{name, url, sha256, path}]
	// BuildVM is the failed build VM that was kept (KeepBuildVMOnFailure).
	BuildVM *VM
	// RoundTrips counts transport operations (script runs).
	RoundTrips int
	// SSHHostKey is the SSH host key the build VM presented and the
	// transport trusted (authorized_keys format); "" over WinRM.
	SSHHostKey string
	Elapsed    time.Duration
}

// StepError is a failing image step, with what the guest said.
type StepError struct {
	Step     string
	ExitCode int
	Output   string // last lines, CLIXML decoded
	Err      error
}

func (e *StepError) Error() string {
	if e.ExitCode != 0 {
		return fmt.Sprintf("image step %q exited with code %d:\n%s", e.Step, e.ExitCode, e.Output)
	}
	return fmt.Sprintf("image step %q: %v", e.Step, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// StageError names the stage of the build that failed.
type StageError struct {
	Stage string
	Err   error
}

func (e *StageError) Error() string { return e.Stage + ": " + e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }

// Build runs a whole image build. On failure the build VM is destroyed unless
// KeepBuildVMOnFailure, in which case Result.BuildVM names it.
func Build(ctx context.Context, vs VSphere, connect Connector, req Request) (res Result, err error) {
	start := time.Now()
	progress := req.Progress
	if progress == nil {
		progress = func(string, map[string]any) {}
	}
	steps, err := bootstrap.ImageSteps(req.Image)
	if err != nil {
		return res, &StageError{"render image steps", err}
	}
	sysprep, err := bootstrap.SysprepStep(req.Unattend)
	if err != nil {
		return res, &StageError{"render sysprep step", err}
	}

	progress("clone", map[string]any{"source": req.Clone.Source, "name": req.Clone.Name})
	vm, err := vs.CloneBuildVM(ctx, req.Clone)
	if err != nil {
		return res, &StageError{"cloning " + req.Clone.Source, err}
	}
	if req.OnBuildVM != nil {
		req.OnBuildVM(vm)
	}
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

	progress("power on", map[string]any{"vm": vm.ID})
	if err := vs.PowerOn(ctx, vm); err != nil {
		return res, &StageError{"powering on the build VM", err}
	}
	progress("wait for IP", map[string]any{"vm": vm.ID})
	ip, err := vs.WaitForIP(ctx, vm)
	if err != nil {
		return res, &StageError{"waiting for the build VM's IP address", err}
	}
	tcfg := req.Transport
	tcfg.Host = ip
	progress("connect", map[string]any{"host": ip, "protocol": string(tcfg.Protocol)})
	t, err := connect(ctx, tcfg)
	if err != nil {
		return res, &StageError{"connecting to the build VM", err}
	}
	defer func() { _ = t.Close() }()
	res.SSHHostKey = tcfg.TrustedHostKey()

	var build string
	for _, step := range steps {
		progress("step "+step.Name, nil)
		out, err := runStep(ctx, t, step, &res.RoundTrips)
		if err != nil {
			return res, err
		}
		if step.MayReboot && strings.Contains(out, bootstrap.RebootMarker) {
			progress("reboot", map[string]any{"step": step.Name})
			_ = t.Close()
			if err := vs.WaitForGuestRestart(ctx, vm); err != nil {
				return res, &StageError{"waiting for the build VM to restart after " + step.Name, err}
			}
			if t, err = connect(ctx, tcfg); err != nil {
				return res, &StageError{"reconnecting after the restart", err}
			}
		}
		if step.Name == "windows-build" {
			if build, err = bootstrap.ParseWindowsBuild(out); err != nil {
				return res, &StepError{Step: step.Name, Err: err}
			}
		}
	}

	progress("sysprep", nil)
	if _, err := runStep(ctx, t, sysprep, &res.RoundTrips); err != nil {
		return res, err
	}
	progress("wait for power-off", map[string]any{"vm": vm.ID})
	if err := vs.WaitForPoweredOff(ctx, vm); err != nil {
		return res, &StageError{"waiting for sysprep to power the build VM off", err}
	}
	res.WindowsBuildFull = build
	res.ContainerdVersion = bootstrap.ContainerdVersion(req.Image.Containerd.URL)
	res.Manifest = manifest(req.Image)
	progress("mark as template", map[string]any{"vm": vm.ID})
	tmpl, err := vs.MarkAsTemplate(ctx, vm, map[string]string{
		keyWindowsBuild: build, keyKubernetesVersion: req.Image.KubernetesVersion,
		keyContainerdVersion: res.ContainerdVersion, keyManifest: res.Manifest,
	})
	if err != nil {
		return res, &StageError{"marking the build VM as a template", err}
	}
	res.Template = tmpl
	res.Elapsed = time.Since(start)
	return res, nil
}

// runStep runs one image step. Everything that leaves it goes through the
// step's redactor: its secrets (and their encodings) are replaced, and a
// sensitive step's script is never echoed.
func runStep(ctx context.Context, t remote.Transport, step bootstrap.Step, roundTrips *int) (string, error) {
	*roundTrips++
	result, err := t.Run(ctx, step.Script)
	red := step.Redactor()
	if err == nil {
		return red.String(result.Stdout), nil
	}
	var exit *remote.ExitError
	if errors.As(err, &exit) {
		return "", &StepError{Step: step.Name, ExitCode: exit.ExitCode, Output: red.String(exit.Output(15)), Err: red.Error(err)}
	}
	return "", &StepError{Step: step.Name, Err: red.Error(err)}
}

type manifestEntry struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	Path   string `json:"path"`
}

// manifest lists every installed artifact, for the resource's manifest output.
func manifest(cfg bootstrap.ImageConfig) string {
	var entries []manifestEntry
	for _, a := range append([]bootstrap.Artifact{cfg.Containerd, cfg.Kubelet, cfg.KubeProxy, cfg.CNIPlugins}, cfg.Additional...) {
		sum, _ := bootstrap.NormalizeSHA256(a.SHA256)
		entries = append(entries, manifestEntry{Name: a.Name, URL: a.URL, SHA256: sum, Path: a.Path})
	}
	b, _ := json.Marshal(entries)
	return string(b)
}
