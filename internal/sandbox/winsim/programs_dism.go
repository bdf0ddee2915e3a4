package winsim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

func init() {
	registerProgram("dism.exe", SubsystemConsole, runDism)
	registerProgram("wusa.exe", SubsystemGUI, runWusa)
}

// hresultExit is the exit code a program that returns an HRESULT has, as
// PowerShell's $LASTEXITCODE (an Int32) shows it: 0x800F081E is -2146498530.
func hresultExit(hr uint32) int { return int(int32(hr)) }

// runDism is DISM's online package servicing, the one form the image build
// uses:
//
//	dism.exe /Online /Add-Package /PackagePath:<file.cab|file.msu> [/Quiet] /NoRestart
//
// Source: https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/dism-operating-system-package-servicing-command-line-options
// (/Add-Package, /PackagePath: a .cab; a .msu on an online image only from
// Windows 11, version 21H2 (build 22000) on: "If you're working with a
// Windows image prior to Windows 11, version 21H2, you can only add .msu
// packages on offline target images", so on Server 2019 and 2022 an online
// .msu is refused as not modelled, on Server 2025 it is served)
// and https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/dism-image-management-command-line-options-s14
// (/Quiet: only errors are shown; /NoRestart: no restart, and exit code
// 3010 when one is needed). Both need an elevated token (a filtered one:
// "Access is denied.", exit code 5: uac.go). The exit code of a
// failure is its HRESULT: 0x800F081E CBS_E_NOT_APPLICABLE (a package for
// another build, or older than the installed cumulative update),
// 0x800F0823 CBS_E_NEW_SERVICING_STACK_REQUIRED (an LCU before its SSU),
// 0x80096010 TRUST_E_BAD_DIGEST (a package whose signature does not
// verify), 2 (no such file); an installed package is left as it is and the
// command succeeds. Error codes: https://learn.microsoft.com/en-us/windows/deployment/update/windows-update-error-reference
// (the CBS_E_ codes). Refused as not modelled: /Image (offline servicing),
// every other DISM command and option (/Get-Packages, /Remove-Package,
// /LogPath, /IgnoreCheck, /PreventPending, /ScratchDir, /English), a
// missing /NoRestart (DISM would restart by itself, or prompt).
func runDism(ctx context.Context, p *Process) int {
	var online, add, quiet, norestart bool
	pkg := ""
	for _, a := range p.Args {
		l := strings.ToLower(a)
		switch {
		case l == "/online":
			online = true
		case l == "/add-package":
			add = true
		case l == "/quiet":
			quiet = true
		case l == "/norestart":
			norestart = true
		case strings.HasPrefix(l, "/packagepath:"):
			pkg = strings.Trim(a[len("/packagepath:"):], `"`)
		default:
			return refuse(p, "the DISM argument "+a)
		}
	}
	switch {
	case !online:
		return refuse(p, "DISM without /Online (offline images)")
	case !add:
		return refuse(p, "DISM without /Add-Package")
	case pkg == "":
		return refuse(p, "DISM /Add-Package without /PackagePath")
	case !norestart:
		return refuse(p, "DISM without /NoRestart (its own restart or prompt)")
	}
	h := p.Host
	banner := func() {
		if !quiet {
			fmt.Fprintf(p.Stdout, "\r\nDeployment Image Servicing and Management tool\r\nVersion: %s.1\r\n\r\nImage Version: %s.%d\r\n\r\n",
				h.cfg.WindowsBuild, h.cfg.WindowsBuild, h.UBR())
		}
	}
	fail := func(code int, hr string, text string) int {
		// Errors are shown even with /Quiet.
		fmt.Fprintf(p.Stdout, "\r\nError: %s\r\n\r\n%s\r\n\r\nThe DISM log file can be found at %s\r\n", hr, text, DISMLog)
		_ = h.fs.WriteFile(DISMLog, []byte(fmt.Sprintf("Error DISM DISM Package Manager: Failed while processing command add-package. HRESULT=%s\r\n", strings.TrimPrefix(hr, "0x"))), true)
		return code
	}
	lp := strings.ToLower(pkg)
	if !strings.HasSuffix(lp, ".cab") && !strings.HasSuffix(lp, ".msu") {
		return refuse(p, "DISM /PackagePath of a file other than .cab or .msu ("+pkg+")")
	}
	if strings.HasSuffix(lp, ".msu") && !dismOnlineMSU(h.cfg.WindowsBuild) {
		return refuse(p, "DISM /Online /Add-Package of a .msu on build "+h.cfg.WindowsBuild+
			" (Microsoft documents .msu for online images from Windows 11, version 21H2, build 22000, on; before it, offline images only)")
	}
	if ok, dir := h.fs.Stat(pkg); !ok || dir {
		banner()
		return fail(2, "2", "The system cannot find the file specified.")
	}
	banner()
	outcome, u := h.addPackage(ctx, pkg, "dism")
	done := func() {
		if !quiet {
			fmt.Fprintf(p.Stdout, "Processing 1 of 1 - Adding package Package_for_%s\r\n[==========================100.0%%==========================]\r\nThe operation completed successfully.\r\n", u.KB)
		}
	}
	switch outcome {
	case servicingInstalled, servicingAlreadyInstalled:
		done()
		return 0
	case servicingRestartNeeded:
		done()
		if !quiet {
			fmt.Fprintf(p.Stdout, "Restart Windows to complete this operation.\r\n")
		}
		return ExitRebootRequired
	case servicingNotApplicable:
		return fail(hresultExit(HResultCBSNotApplicable), "0x800f081e", "The specified package is not applicable to this image.")
	case servicingNeedsSSU:
		return fail(hresultExit(HResultCBSNewServicingStackRequired), "0x800f0823", "The package needs a newer version of the servicing stack.")
	case servicingBadSignature:
		return fail(hresultExit(HResultTrustBadDigest), "0x80096010", "The digital signature of the object did not verify.")
	case servicingCheckpointNotModelled:
		return refuse(p, checkpointNotModelled(u))
	default:
		return fail(hresultExit(0x80070002), "0x80070002", "An error occurred trying to open - "+pkg+" Error: 0x80070002")
	}
}

// dismOnlineMSU reports whether DISM adds a .msu to the running system on a
// build ("10.0.20348" or "20348"): from Windows 11, version 21H2 (build
// 22000) on, per the /Add-Package note of the DISM page above.
func dismOnlineMSU(build string) bool {
	if i := strings.LastIndexByte(build, '.'); i >= 0 {
		build = build[i+1:]
	}
	n, err := strconv.Atoi(build)
	return err == nil && n >= 22000
}

// runWusa is the Windows Update Standalone Installer:
//
//	wusa.exe <file.msu> /quiet [/norestart]
//
// Source: https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/standalone-windows-update-installer
// (/quiet: no user interaction, restarts when needed unless /norestart).
// Exit codes: 0; 3010 ERROR_SUCCESS_REBOOT_REQUIRED (with /norestart);
// 1641 ERROR_SUCCESS_REBOOT_INITIATED (without /norestart: wusa restarts
// the computer; https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--1300-1699-);
// 2359302 (0x240006 WU_S_ALREADY_INSTALLED) for an installed update and
// 0x80240017 WU_E_NOT_APPLICABLE for one that does not apply (KB949545,
// https://mskb.pkisolutions.com/kb/949545, and the WUA codes:
// https://learn.microsoft.com/en-us/windows/win32/wua_sdk/wua-success-and-error-codes-);
// wusa reports an update whose servicing stack prerequisite is missing as
// not applicable too; 0x80096010 TRUST_E_BAD_DIGEST for a package whose
// signature does not verify. Run from a network logon (WinRM, Windows
// Remote Shell, SSH) wusa installs nothing and exits with 5
// ERROR_ACCESS_DENIED: KB2773898, "Windows Update Standalone Installer
// (wusa.exe) returns 0x5 ERROR_ACCESS_DENIED when deploying .msu files
// through WinRM and Windows Remote Shell" (wusa goes through the Windows
// Update Agent, which refuses a remote caller: "Using WUA From a Remote
// Computer", https://learn.microsoft.com/en-us/windows/win32/wua_sdk/using-wua-from-a-remote-computer);
// from a local logon, a guest operation or a scheduled task as SYSTEM
// (tasks.go) it installs. Refused as not modelled: anything but a .msu,
// the interactive forms (no /quiet), /uninstall, /kb:, /extract,
// /warnrestart, /promptrestart, /forcerestart, /log.
func runWusa(ctx context.Context, p *Process) int {
	var quiet, norestart bool
	file := ""
	for _, a := range p.Args {
		l := strings.ToLower(a)
		switch {
		case l == "/quiet":
			quiet = true
		case l == "/norestart":
			norestart = true
		case strings.HasPrefix(l, "/"):
			return refuse(p, "the wusa argument "+a)
		case file == "":
			file = a
		default:
			return refuse(p, "a second wusa file "+a)
		}
	}
	switch {
	case file == "":
		return refuse(p, "wusa without a .msu file")
	case !strings.HasSuffix(strings.ToLower(file), ".msu"):
		return refuse(p, "wusa of a file other than .msu ("+file+")")
	case !quiet:
		return refuse(p, "wusa without /quiet (its dialogs)")
	}
	h := p.Host
	if networkLogon(ctx) {
		// KB2773898: the error is the exit code; /quiet shows nothing.
		return ExitAccessDenied
	}
	if ok, dir := h.fs.Stat(file); !ok || dir {
		return hresultExit(0x80070002)
	}
	outcome, u := h.addPackage(ctx, file, "wusa")
	switch outcome {
	case servicingCheckpointNotModelled:
		return refuse(p, checkpointNotModelled(u))
	case servicingInstalled:
		return 0
	case servicingAlreadyInstalled:
		return ExitAlreadyInstalled
	case servicingRestartNeeded:
		if norestart {
			return ExitRebootRequired
		}
		h.rebootSoon()
		return ExitRebootInitiated
	case servicingNotApplicable, servicingNeedsSSU:
		return hresultExit(HResultWUNotApplicable)
	case servicingBadSignature:
		return hresultExit(HResultTrustBadDigest)
	default:
		return hresultExit(0x80070002)
	}
}
