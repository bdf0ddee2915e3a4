package winsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
)

// Servicing: the component-based servicing (CBS) store of the host, the one
// DISM /Online /Add-Package and wusa.exe install into
// (https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/dism-operating-system-package-servicing-command-line-options,
// https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/standalone-windows-update-installer).
//
// An update package in the sandbox is internal/sandbox/updatepkg's text file,
// the same for a .cab and a .msu: its KB, whether it is a servicing stack
// update (SSU) or a latest cumulative update (LCU), the build it applies to,
// the update build revision (UBR) the build has once it is installed and the
// computer has restarted, the SSU it needs first, whether it needs a restart,
// and a signature standing for the package's Authenticode signature, which
// Windows verifies (WinVerifyTrust) before CBS opens the package; a package
// whose content is not what was signed ("corrupt") is refused with
// TRUST_E_BAD_DIGEST (0x80096010, "The digital signature of the object did
// not verify.", winerror.h:
// https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-erref/705fb797-2175-4a90-b5a3-3918024b10b8).
//
// The state is <Dir>/servicing.json, part of the disk (a clone has its
// source's updates). An installed package that needs a restart is
// InstallPending until the next boot: until then the registry holds the
// RebootPending key of Component Based Servicing (and, for wusa, Windows
// Update's Auto Update\RebootRequired key), the keys Configuration Manager's
// "Pending system restart" check reads
// (https://learn.microsoft.com/en-us/mem/configmgr/core/servers/deploy/install/list-of-prerequisite-checks#pending-system-restart),
// and the UBR of CurrentVersion is the old one; the boot completes the
// install, removes the keys and writes the package's UBR.

// Registry keys of a pending restart.
const (
	CBSRebootPendingKey = `HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\Component Based Servicing\RebootPending`
	WURebootRequiredKey = `HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\WindowsUpdate\Auto Update\RebootRequired`
	// CBSLog is the CBS log (%WINDIR%\Logs\CBS\CBS.log) that DISM and wusa
	// name for details of an online servicing failure.
	CBSLog = `C:\Windows\Logs\CBS\CBS.log`
	// DISMLog is DISM's own log.
	DISMLog = `C:\Windows\Logs\DISM\dism.log`
)

// Package states, as DISM /Get-Packages names them.
const (
	PackageInstalled      = "Installed"
	PackageInstallPending = "Install Pending"
)

// The HRESULTs and exit codes the servicing programs answer with.
const (
	// ERROR_SUCCESS_REBOOT_REQUIRED: the install needs a restart (/norestart).
	ExitRebootRequired = 3010
	// ERROR_SUCCESS_REBOOT_INITIATED: wusa restarts the computer itself.
	ExitRebootInitiated = 1641
	// ERROR_ACCESS_DENIED: wusa run from a network logon (KB2773898).
	ExitAccessDenied = 5
	// WU_S_ALREADY_INSTALLED (0x240006), wusa's answer for an installed
	// update (KB949545: "If the software update has already been installed,
	// the Wusa.exe tool returns a 0x240006 (WU_S_ALREADY_INSTALLED)").
	ExitAlreadyInstalled = 0x240006
	// CBS_E_NOT_APPLICABLE (0x800F081E), DISM: "The specified package is not
	// applicable to this image."
	HResultCBSNotApplicable uint32 = 0x800F081E
	// CBS_E_NEW_SERVICING_STACK_REQUIRED (0x800F0823): "Package needs a newer
	// version of the servicing stack." (an LCU before its SSU).
	HResultCBSNewServicingStackRequired uint32 = 0x800F0823
	// WU_E_NOT_APPLICABLE (0x80240017), wusa's answer for an update that does
	// not apply (KB949545), its SSU prerequisite missing included.
	HResultWUNotApplicable uint32 = 0x80240017
	// TRUST_E_BAD_DIGEST (0x80096010): the package's signature does not verify.
	HResultTrustBadDigest uint32 = 0x80096010
)

// servicingState is <Dir>/servicing.json.
type servicingState struct {
	// Packages by KB: PackageInstalled or PackageInstallPending.
	Packages map[string]string `json:"packages"`
	// UBR is the revision the installed LCUs brought (0: the installation's).
	UBR int `json:"ubr,omitempty"`
	// PendingUBR is the revision after the next boot (0: none pending).
	PendingUBR int `json:"pendingUbr,omitempty"`
}

type servicingStore struct {
	mu    sync.Mutex
	path  string
	state servicingState
}

func loadServicing(path string) (*servicingStore, error) {
	s := &servicingStore{path: path, state: servicingState{Packages: map[string]string{}}}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s.state); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.state.Packages == nil {
		s.state.Packages = map[string]string{}
	}
	return s, nil
}

func (s *servicingStore) saveLocked() error {
	b, err := json.MarshalIndent(s.state, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(s.path, b, 0o644)
}

// UBR is the host's update build revision now: the configured
// installation's, or the one the installed cumulative updates brought.
func (h *Host) UBR() int {
	h.servicing.mu.Lock()
	defer h.servicing.mu.Unlock()
	return max(h.cfg.UBR, h.servicing.state.UBR)
}

// InstalledUpdates lists the KBs of the servicing store with their state
// (PackageInstalled, PackageInstallPending).
func (h *Host) InstalledUpdates() map[string]string {
	h.servicing.mu.Lock()
	defer h.servicing.mu.Unlock()
	out := make(map[string]string, len(h.servicing.state.Packages))
	for k, v := range h.servicing.state.Packages {
		out[k] = v
	}
	return out
}

// servicingOutcome is what installing one package did.
type servicingOutcome int

const (
	servicingInstalled servicingOutcome = iota
	servicingRestartNeeded
	servicingAlreadyInstalled
	servicingNotApplicable
	servicingNeedsSSU
	servicingBadSignature
	servicingNotAPackage
	// servicingCheckpointNotModelled: a target LCU without the checkpoint
	// it builds on, through DISM or wusa (checkpointNotModelled).
	servicingCheckpointNotModelled
)

// addPackage installs a package file into the servicing store (CBS), as
// DISM and wusa both do, and writes what CBS logs.
func (h *Host) addPackage(ctx context.Context, file, via string) (servicingOutcome, *updatepkg.Package) {
	b, err := h.fs.ReadFile(file)
	if err != nil {
		return servicingNotAPackage, nil
	}
	u, err := updatepkg.Parse(b)
	switch {
	case errors.Is(err, updatepkg.ErrNotAPackage):
		h.cbsLog("Error", "CBS", fmt.Sprintf("Failed to open package file: %s [HRESULT = 0x80070002 - ERROR_FILE_NOT_FOUND]", file))
		return servicingNotAPackage, nil
	case err != nil:
		h.cbsLog("Error", "CBS", fmt.Sprintf("Failed to verify the signature of %s [HRESULT = 0x80096010 - TRUST_E_BAD_DIGEST]", file))
		return servicingBadSignature, nil
	}
	for _, kb := range h.Faults().UpdatesNeverInstalled {
		if strings.EqualFold(kb, u.KB) {
			// Faults.UpdatesNeverInstalled: success, and nothing installed.
			h.cbsLog("Info", "CBS", fmt.Sprintf("Exec: Processing package %s (%s, via %s)", u.KB, file, via))
			return servicingInstalled, u
		}
	}
	build := h.cfg.WindowsBuild
	if i := strings.LastIndexByte(build, '.'); i >= 0 {
		build = build[i+1:]
	}
	s := h.servicing
	s.mu.Lock()
	defer s.mu.Unlock()
	ident := fmt.Sprintf("Package_for_%s~31bf3856ad364e35~amd64~~%s.%d", u.KB, u.Build, u.UBR)
	h.cbsLog("Info", "CBS", fmt.Sprintf("Exec: Processing package %s (%s, via %s)", ident, file, via))
	if st, ok := s.state.Packages[u.KB]; ok {
		h.cbsLog("Info", "CBS", fmt.Sprintf("Package %s is already %s", ident, strings.ToLower(st)))
		return servicingAlreadyInstalled, u
	}
	if u.Build != build || (u.Kind == updatepkg.LCU && u.UBR <= max(h.cfg.UBR, s.state.UBR, s.state.PendingUBR)) {
		h.cbsLog("Error", "CBS", fmt.Sprintf("Package %s is not applicable to build 10.0.%s.%d [HRESULT = 0x800f081e - CBS_E_NOT_APPLICABLE]",
			ident, build, max(h.cfg.UBR, s.state.UBR)))
		return servicingNotApplicable, u
	}
	if u.Requires != "" && s.state.Packages[u.Requires] != PackageInstalled {
		h.cbsLog("Error", "CBS", fmt.Sprintf("Package %s needs the servicing stack update %s [HRESULT = 0x800f0823 - CBS_E_NEW_SERVICING_STACK_REQUIRED]", ident, u.Requires))
		return servicingNeedsSSU, u
	}
	if checkpointMissing(u, via, s.state.Packages[u.Checkpoint], max(h.cfg.UBR, s.state.UBR)) {
		h.cbsLog("Error", "CBS", fmt.Sprintf("winsim: %s without the checkpoint cumulative update %s (revision %d) it builds on: not modelled",
			ident, u.Checkpoint, u.CheckpointUBR))
		return servicingCheckpointNotModelled, u
	}
	out := servicingInstalled
	if u.Restart {
		s.state.Packages[u.KB] = PackageInstallPending
		if u.UBR > s.state.PendingUBR {
			s.state.PendingUBR = u.UBR
		}
		_ = h.reg.set(CBSRebootPendingKey, ident, RegValue{Type: RegDWord, DWord: 1})
		if via == "wusa" || via == "wua" {
			_ = h.reg.createKey(WURebootRequiredKey)
		}
		h.cbsLog("Info", "CBS", fmt.Sprintf("Package %s staged: a restart is required to complete the install", ident))
		out = servicingRestartNeeded
	} else {
		s.state.Packages[u.KB] = PackageInstalled
		if u.UBR > s.state.UBR {
			s.state.UBR = u.UBR
		}
		h.cbsLog("Info", "CBS", fmt.Sprintf("Package %s installed", ident))
	}
	if err := s.saveLocked(); err != nil {
		h.cbsLog("Error", "CBS", "Failed to save the servicing store: "+err.Error())
	}
	if u.Kind == updatepkg.LCU {
		// A cumulative update's install takes its time (the latency
		// model's UpdateInstall; none when it is off); the store holds the
		// outcome already, as CBS stages before it reports.
		s.mu.Unlock()
		_ = h.cfg.Latency.Wait(ctx, latency.UpdateInstall)
		s.mu.Lock()
	}
	return out, u
}

// updatePending reports a staged update that the next boot completes.
func (h *Host) updatePending() bool {
	s := h.servicing
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.PendingUBR > 0
}

// checkpointMissing: a target LCU that carries only the differentials since
// a checkpoint cumulative update, on a host below the checkpoint's revision
// that does not have the checkpoint (installed, or staged before it in the
// same restart), installed from a file through DISM or wusa. Microsoft says
// the checkpoint must be installed first, or both from one folder ("Checkpoint
// cumulative updates and Microsoft Update Catalog usage"); what Windows
// answers otherwise it does not document, so the simulator refuses it as not
// modelled. The Windows Update Agent (via "wua") finds and merges the
// checkpoints itself, which the same page states for WU and WSUS.
func checkpointMissing(u *updatepkg.Package, via, checkpointState string, ubr int) bool {
	return u.Checkpoint != "" && via != "wua" && ubr < u.CheckpointUBR &&
		checkpointState != PackageInstalled && checkpointState != PackageInstallPending
}

// checkpointNotModelled is the refusal DISM and wusa write for
// servicingCheckpointNotModelled.
func checkpointNotModelled(u *updatepkg.Package) string {
	return fmt.Sprintf("installing %s without the checkpoint cumulative update %s it builds on (Microsoft documents installing the checkpoint first, or both from one folder, not Windows' answer to this)",
		u.KB, u.Checkpoint)
}

// bootServicing completes the pending installs, as Windows does while it
// restarts: the packages become Installed, the UBR is the highest pending
// one, and the pending-restart keys go.
func (h *Host) bootServicing() {
	s := h.servicing
	s.mu.Lock()
	changed := false
	for kb, st := range s.state.Packages {
		if st == PackageInstallPending {
			s.state.Packages[kb] = PackageInstalled
			changed = true
		}
	}
	if s.state.PendingUBR > s.state.UBR {
		s.state.UBR = s.state.PendingUBR
	}
	s.state.PendingUBR = 0
	ubr := max(h.cfg.UBR, s.state.UBR)
	if changed {
		_ = s.saveLocked()
	}
	s.mu.Unlock()
	if !changed {
		return
	}
	_ = h.reg.deleteKey(CBSRebootPendingKey)
	_ = h.reg.deleteKey(WURebootRequiredKey)
	_ = h.reg.set(CurrentVersionKey, "UBR", RegValue{Type: RegDWord, DWord: uint32(ubr)})
	h.cbsLog("Info", "CBS", fmt.Sprintf("Startup processing completed the pending operations: UBR %d", ubr))
}

// cbsLog appends a line to CBS.log in its format ("<date> <time>, <level>
// <component> <text>").
func (h *Host) cbsLog(level, component, text string) {
	line := fmt.Sprintf("%s, %-7s %-5s %s\r\n", time.Now().UTC().Format("2006-01-02 15:04:05"), level, component, text)
	_ = h.fs.WriteFile(CBSLog, []byte(line), true)
}

// RegistryKeyExists reports whether a key of HKEY_LOCAL_MACHINE exists (the
// pending-restart keys have no values that matter).
func (h *Host) RegistryKeyExists(key string) bool { return h.reg.keyExists(key) }
