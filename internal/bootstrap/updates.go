package bootstrap

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// WindowsUpdate is one update package the image installs: a servicing stack
// update or a cumulative update from the site's mirror of the Microsoft
// Update Catalog, installed in the order given (a month's SSU before its
// LCU: https://learn.microsoft.com/en-us/windows/deployment/update/servicing-stack-updates).
// A .cab goes through DISM /Online /Add-Package in the build's session, a
// .msu through wusa.exe /quiet /norestart in a scheduled task as SYSTEM
// (https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/dism-operating-system-package-servicing-command-line-options,
// https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/standalone-windows-update-installer):
// wusa run from a WinRM or SSH session exits with 5 ERROR_ACCESS_DENIED and
// installs nothing (KB2773898), and DISM takes a .msu on a running system
// only from Windows 11 21H2 (build 22000) on, so not on Server 2019 or
// 2022. KB2773898's own workaround, which ansible.windows' win_hotfix
// follows (expand.exe, then Add-WindowsPackage of the inner .cab), leaves
// out what wusa reads from the .msu: its applicability rules and, in
// today's packages, several .cab files in order (a combined SSU and LCU,
// Server 2025's checkpoint cumulative updates). wusa as SYSTEM keeps wusa's
// own handling and exit codes; the task is the mechanism online_updates
// uses for the Windows Update Agent, and Packer's elevated provisioners
// and ansible's become use for the same refusal.
// kubernetes-sigs/image-builder installs updates at build time too
// (images/capi/ansible/windows/roles/systemprep: win_updates by category
// or KB); the image does it from files it verifies, with no Windows Update
// service in the loop.
type WindowsUpdate struct {
	KB     string // KB5044281
	URL    string // .cab or .msu
	SHA256 string
}

// The exit codes an update step accepts (the rest fail the build).
const (
	UpdateExitRebootRequired   = 3010    // ERROR_SUCCESS_REBOOT_REQUIRED
	UpdateExitRebootInitiated  = 1641    // ERROR_SUCCESS_REBOOT_INITIATED
	UpdateExitAlreadyInstalled = 2359302 // 0x240006 WU_S_ALREADY_INSTALLED (wusa)
)

var kbPattern = regexp.MustCompile(`^KB[0-9]{6,8}$`)

// ValidKB reports whether s is a KB article id as the Microsoft Update
// Catalog writes them: "KB" and its number (six to eight digits).
func ValidKB(s string) bool { return kbPattern.MatchString(s) }

// UpdatePackageKind is "cab" or "msu" from the URL's path, "" for anything else.
func UpdatePackageKind(u string) string {
	p := strings.ToLower(u)
	if parsed, err := url.Parse(u); err == nil {
		p = strings.ToLower(parsed.Path)
	}
	switch {
	case strings.HasSuffix(p, ".cab"):
		return "cab"
	case strings.HasSuffix(p, ".msu"):
		return "msu"
	}
	return ""
}

// ValidateUpdates reports the first problem of a windows_updates list,
// naming the element: its KB, URL and checksum, then CheckUpdateList.
func ValidateUpdates(updates []WindowsUpdate) error {
	for i, u := range updates {
		what := fmt.Sprintf("windows_updates[%d]", i)
		if !ValidKB(u.KB) {
			return fmt.Errorf("%s.kb: %q is not a KB id like KB5044281", what, u.KB)
		}
		a := Artifact{Name: what + " (" + u.KB + ")", URL: u.URL, SHA256: u.SHA256, Path: "-"}
		if err := a.Validate(); err != nil {
			return err
		}
	}
	return CheckUpdateList(updates)
}

// CheckUpdateList reports what no single attribute's validator sees: a
// package that is neither a .cab nor a .msu, and a KB listed twice.
func CheckUpdateList(updates []WindowsUpdate) error {
	seen := map[string]int{}
	for i, u := range updates {
		what := fmt.Sprintf("windows_updates[%d]", i)
		if j, ok := seen[strings.ToUpper(u.KB)]; ok {
			return fmt.Errorf("%s.kb: %s is listed twice (also windows_updates[%d]); list each update once", what, u.KB, j)
		}
		seen[strings.ToUpper(u.KB)] = i
		if UpdatePackageKind(u.URL) == "" {
			return fmt.Errorf("%s.url: %q is not a .cab (installed with DISM) or .msu (installed with wusa.exe) package", what, u.URL)
		}
	}
	return nil
}

// UpdateStepName is the image step that installs an update.
func UpdateStepName(kb string) string { return "windows-update-" + kb }

// updateSteps renders one step per update, in order: download into
// DownloadDir, verify the SHA-256, install, and restart when the package
// asks for it (3010). The downloads go through the proxy, if any.
func updateSteps(updates []WindowsUpdate, proxy Proxy) ([]Step, error) {
	if err := ValidateUpdates(updates); err != nil {
		return nil, err
	}
	var steps []Step
	for _, u := range updates {
		name := UpdateStepName(u.KB)
		script, err := render(name, "windows-update", map[string]any{
			"KB": u.KB, "URL": u.URL, "Hash": strings.ToUpper(u.SHA256), "File": DownloadPath(u.URL),
			"Dir": UpdateTaskDir, "Task": UpdateTaskName, "Result": UpdateTaskDir + `\result.txt`, "Partial": UpdateTaskDir + `\result.partial`,
			"Cab": UpdatePackageKind(u.URL) == "cab", "Marker": RebootMarker, "CBSLog": CBSLog,
			"RebootRequired": UpdateExitRebootRequired, "RebootInitiated": UpdateExitRebootInitiated,
			"AlreadyInstalled": UpdateExitAlreadyInstalled,
			"Proxy":            proxy.For(u.URL), "ProxySet": proxy.IsSet(),
		})
		if err != nil {
			return nil, err
		}
		steps = append(steps, Step{Name: name, Script: script, MayReboot: true})
	}
	return steps, nil
}

// UpdatesInstalledStepName is the image step that reads back, after the
// update packages' steps, which updates Windows has installed.
const UpdatesInstalledStepName = "windows-updates-installed"

// updatesInstalledStep reads the installed updates back with Get-HotFix
// (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/get-hotfix?view=powershell-5.1)
// and fails naming every listed KB that is not among them: an installer's
// exit code is what it reported, not what was installed (wusa.exe is a
// GUI-subsystem program that PowerShell's & does not wait for), so the
// image records what the guest lists (ParseInstalledUpdates). It runs
// after the last package's restart, when no install is pending. None for
// an empty list.
func updatesInstalledStep(updates []WindowsUpdate) ([]Step, error) {
	if len(updates) == 0 {
		return nil, nil
	}
	var kbs []string
	for _, u := range updates {
		kbs = append(kbs, strings.ToUpper(u.KB))
	}
	script, err := render(UpdatesInstalledStepName, "windows-updates-installed", map[string]any{"KBs": kbs, "CBSLog": CBSLog})
	if err != nil {
		return nil, err
	}
	return []Step{{Name: UpdatesInstalledStepName, Script: script}}, nil
}

var installedUpdateLine = regexp.MustCompile(`(?m)^installed-update (KB[0-9]+)\r?$`)

// ParseInstalledUpdates reads the KBs the windows-updates-installed step
// listed, in the order the guest listed them.
func ParseInstalledUpdates(out string) []string {
	var kbs []string
	for _, m := range installedUpdateLine.FindAllStringSubmatch(out, -1) {
		kbs = append(kbs, m[1])
	}
	return kbs
}

// The scheduled task that runs wusa.exe as SYSTEM, and the directory of its
// script and result.
const (
	UpdateTaskName = "terraform-provider-windows-wusa"
	UpdateTaskDir  = KubernetesDir + `\windows-update-wusa`
)

// CBSLog is the servicing log whose last lines a failed update reports.
const CBSLog = `C:\Windows\Logs\CBS\CBS.log`
