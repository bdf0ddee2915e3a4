package bootstrap

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// OnlineUpdates selects the updates the image installs through the Windows
// Update Agent, from Windows Update or from the site's WSUS, as
// kubernetes-sigs/image-builder does at build time (ansible.windows'
// win_updates: category_names, accept_list, reject_list) and Packer's
// windows-update provisioner (rgl/packer-plugin-windows-update) does.
type OnlineUpdates struct {
	// Categories are update classifications by name ("Security Updates");
	// an update of any of them is a candidate.
	Categories []string
	// IncludeKBs, when set, keeps only these of the candidates; ExcludeKBs
	// drops these.
	IncludeKBs, ExcludeKBs []string
	// WSUSServer, when set, is the intranet update service the image asks
	// (http://wsus:8530 or https://wsus:8531), written into the Windows
	// Update policy keys; else the agent asks its default service (Windows
	// Update, or the WSUS the template's own policy names).
	WSUSServer string
}

// Enabled reports whether any online update is asked for.
func (o *OnlineUpdates) Enabled() bool { return o != nil && len(o.Categories) > 0 }

// UpdateClassifications are the update classifications of Windows Update
// and WSUS, by the names Windows Update Agent reports (ICategory.Name of
// type UpdateClassification), with their GUIDs (ICategory.CategoryID).
// Names: "Description of the standard terminology that is used to describe
// Microsoft software updates" (KB824684,
// https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/standard-terminology-software-updates);
// GUIDs: WSUS's classifications, as "Configure Windows Update for Business"
// lists them (https://learn.microsoft.com/en-us/windows/deployment/update/waas-configure-wufb).
// There is no servicing stack classification: a servicing stack update
// carries the classification Microsoft gives it.
var UpdateClassifications = map[string]string{
	"Applications":       "5c9376ab-8ce6-464a-b136-22113dd69801",
	"Connectors":         "434de588-ed14-48f5-8eed-a15e09a991f6",
	"Critical Updates":   "e6cf1350-c01b-414d-a61f-263d14d133b4",
	"Definition Updates": "e0789628-ce08-4437-be74-2495b842f43b",
	"Developer Kits":     "e140075d-8433-45c3-ad87-e72345b36078",
	"Drivers":            "ebfc1fc5-71a4-4f7b-9aca-3b9a503104a0",
	"Feature Packs":      "b54e7d24-7add-428f-8b75-90a396fa584f",
	"Guidance":           "9511d615-35b2-47bb-927f-f73d8e9260bb",
	"Security Updates":   "0fa1201d-4330-4fa8-8ae9-b877473b6441",
	"Service Packs":      "68c5b0a3-d1a6-4553-ae49-01d3a7827828",
	"Tools":              "b4832bd8-e735-4761-8daf-37f882276dab",
	"Update Rollups":     "28bc880e-0592-4cbf-8f95-c79b17911d5f",
	"Updates":            "cd5ffd1e-e932-4e3a-bf74-18bf0b1bbd83",
	"Upgrades":           "3689bdc8-b205-4af4-8d4a-a63924c5e9d5",
}

// ClassificationNames lists UpdateClassifications' names, sorted.
func ClassificationNames() []string {
	var names []string
	for n := range UpdateClassifications {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UpdateCriteria is the IUpdateSearcher::Search criteria of the categories:
// software updates not installed and not hidden, of any of the
// classifications. OR is allowed only at the top level of the criteria
// (https://learn.microsoft.com/en-us/windows/win32/api/wuapi/nf-wuapi-iupdatesearcher-search),
// so each category repeats the conditions.
func UpdateCriteria(categories []string) (string, error) {
	var parts []string
	for _, c := range categories {
		id, ok := UpdateClassifications[c]
		if !ok {
			return "", fmt.Errorf("%q is not a Windows Update classification", c)
		}
		parts = append(parts, "IsInstalled=0 and IsHidden=0 and Type='Software' and CategoryIDs contains '"+id+"'")
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("no categories")
	}
	return strings.Join(parts, " or "), nil
}

// ValidateOnlineUpdates reports the first problem of an online selection,
// naming the attribute (online_updates.<attribute>) and the fix.
func ValidateOnlineUpdates(o OnlineUpdates) error {
	if len(o.Categories) == 0 {
		return fmt.Errorf("online_updates.categories: list at least one update classification, for example \"Security Updates\"")
	}
	for _, c := range o.Categories {
		if _, ok := UpdateClassifications[c]; !ok {
			hint := ""
			if strings.Contains(strings.ToLower(c), "servicing stack") {
				hint = " (a servicing stack update carries the classification Microsoft gives it, such as \"Security Updates\")"
			} else if fixed := classificationFold(c); fixed != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", fixed)
			}
			return fmt.Errorf("online_updates.categories: %q is not a Windows Update classification%s; use one of %s",
				c, hint, strings.Join(quoted(ClassificationNames()), ", "))
		}
	}
	for _, l := range []struct {
		attr string
		kbs  []string
	}{{"include_kbs", o.IncludeKBs}, {"exclude_kbs", o.ExcludeKBs}} {
		for _, kb := range l.kbs {
			if !ValidKB(kb) {
				return fmt.Errorf("online_updates.%s: %q is not a KB id like KB5044281", l.attr, kb)
			}
		}
	}
	return CheckOnlineSelection(o)
}

// CheckOnlineSelection reports what no single attribute's validator sees:
// a KB listed twice, or both included and excluded, and a WSUS URL that is
// not a server's.
func CheckOnlineSelection(o OnlineUpdates) error {
	seen := map[string]string{}
	for _, l := range []struct {
		attr string
		kbs  []string
	}{{"include_kbs", o.IncludeKBs}, {"exclude_kbs", o.ExcludeKBs}} {
		for _, kb := range l.kbs {
			k := strings.ToUpper(kb)
			if prev, ok := seen[k]; ok {
				if prev == l.attr {
					return fmt.Errorf("online_updates.%s: %s is listed twice; list each KB once", l.attr, kb)
				}
				return fmt.Errorf("online_updates.exclude_kbs: %s is also in include_kbs; an update cannot be both included and excluded", kb)
			}
			seen[k] = l.attr
		}
	}
	if o.WSUSServer != "" {
		return ValidateWSUSServer(o.WSUSServer)
	}
	return nil
}

// ValidateWSUSServer checks a WSUS URL as the WUServer policy takes it:
// http or https, a host and an optional port, nothing after. WSUS serves
// HTTP on 8530 by default and HTTPS on 8531 once configured for it
// ("Secure WSUS with the Secure Sockets Layer protocol",
// https://learn.microsoft.com/en-us/windows-server/administration/windows-server-update-services/deploy/2-configure-wsus#bkmk_2_5_ConfigSSL);
// http is accepted because WSUS's default is http: the agent verifies the
// packages' signatures either way, https also protects the metadata.
func ValidateWSUSServer(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("online_updates.wsus_server: %q is not an http:// or https:// URL of a WSUS server, like http://wsus.example.com:8530", s)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("online_updates.wsus_server: %q has a path, query, fragment or user; give the server only, like http://wsus.example.com:8530", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("online_updates.wsus_server: %q has an invalid port", s)
		}
	}
	if strings.ContainsAny(s, "\"`$' ") {
		return fmt.Errorf("online_updates.wsus_server: %q contains a quote, backtick, $ or space", s)
	}
	return nil
}

func classificationFold(c string) string {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }
	for _, n := range ClassificationNames() {
		if norm(n) == norm(c) {
			return n
		}
	}
	return ""
}

func quoted(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strconv.Quote(s)
	}
	return out
}

// Online update steps.
const (
	WSUSStepName         = "windows-update-wsus"
	OnlineUpdateStepName = "windows-update-online"
	// OnlineUpdateRounds bounds how often the online step runs again after
	// the restart its updates needed.
	OnlineUpdateRounds = 10
)

// The Windows Update policy keys of an intranet service
// (https://learn.microsoft.com/en-us/windows/deployment/update/waas-wu-settings#specify-intranet-microsoft-update-service-location).
const (
	wuPolicyKey   = `HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate`
	wuauPolicyKey = `HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate\AU`
)

// WUErrors are the HRESULTs an online update step names, with their
// meaning (https://learn.microsoft.com/en-us/windows/win32/wua_sdk/wua-success-and-error-codes-,
// https://learn.microsoft.com/en-us/windows/deployment/update/windows-update-error-reference).
var WUErrors = map[string]string{
	"0x80070005": "E_ACCESSDENIED: access is denied (the Windows Update Agent refuses its downloader and installer to a remote logon)",
	"0x8024402C": "WU_E_PT_WINHTTP_NAME_NOT_RESOLVED: the proxy or update server name cannot be resolved; check the guest's DNS, proxy and wsus_server",
	"0x80072EFD": "ERROR_WINHTTP_CANNOT_CONNECT: the update server cannot be reached; check the URL, port and firewall, and at a site that lets only its proxy out set proxy (the agent goes through WinHTTP's proxy)",
	"0x80072EE2": "ERROR_WINHTTP_TIMEOUT: the update server did not answer in time",
	"0x80244019": "WU_E_PT_HTTP_STATUS_NOT_FOUND: the server answered HTTP 404; is wsus_server a WSUS server?",
	"0x8024401F": "WU_E_PT_HTTP_STATUS_SERVER_ERROR: the update server answered HTTP 500",
	"0x80244021": "WU_E_PT_HTTP_STATUS_BAD_GATEWAY: the proxy answered HTTP 502 (it could not reach the update server)",
	"0x80244022": "WU_E_PT_HTTP_STATUS_SERVICE_UNAVAIL: the update server answered HTTP 503",
	"0x80240032": "WU_E_INVALID_CRITERIA: the search criteria string was invalid",
	"0x80240024": "WU_E_NO_UPDATE: there are no updates",
	"0x80240034": "WU_E_DOWNLOAD_FAILED: the update failed to download",
	"0x80240017": "WU_E_NOT_APPLICABLE: the update is not applicable to this computer",
	"0x800F0823": "CBS_E_NEW_SERVICING_STACK_REQUIRED: the update needs a newer servicing stack",
	"0x80096010": "TRUST_E_BAD_DIGEST: the digital signature of the package did not verify",
	"0x8024001E": "WU_E_SERVICE_STOP: the service or system was being shut down",
	"0x80240016": "WU_E_INSTALL_NOT_ALLOWED: another installation is in progress or a restart is pending",
}

func wuErrorKeys() []string {
	keys := make([]string, 0, len(WUErrors))
	for k := range WUErrors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// onlineUpdateSteps renders the WSUS policy step (when a server is set) and
// the step that searches, downloads and installs in a scheduled task as
// LocalSystem: the Windows Update Agent refuses CreateUpdateDownloader and
// CreateUpdateInstaller to a remote logon (E_ACCESSDENIED,
// https://learn.microsoft.com/en-us/windows/win32/wua_sdk/using-wua-from-a-remote-computer),
// so, as Packer's elevated provisioners and ansible.windows' win_updates,
// the step registers a task that runs the agent's script and waits for its
// result file (a FileSystemWatcher, not a poll). The step is run again
// after each restart its updates need, until nothing applies.
func onlineUpdateSteps(o *OnlineUpdates) ([]Step, error) {
	if !o.Enabled() {
		return nil, nil
	}
	if err := ValidateOnlineUpdates(*o); err != nil {
		return nil, err
	}
	criteria, err := UpdateCriteria(o.Categories)
	if err != nil {
		return nil, err
	}
	var steps []Step
	if o.WSUSServer != "" {
		script, err := render(WSUSStepName, "windows-update-wsus", map[string]any{
			"Server": strings.TrimRight(o.WSUSServer, "/"), "Key": wuPolicyKey, "AUKey": wuauPolicyKey,
		})
		if err != nil {
			return nil, err
		}
		steps = append(steps, Step{Name: WSUSStepName, Script: script, Rerunnable: true})
	}
	upper := func(kbs []string) []string {
		out := make([]string, len(kbs))
		for i, k := range kbs {
			out[i] = strings.ToUpper(k)
		}
		return out
	}
	script, err := render(OnlineUpdateStepName, "windows-update-online", map[string]any{
		"Criteria": criteria, "Include": upper(o.IncludeKBs), "Exclude": upper(o.ExcludeKBs),
		"Dir": KubernetesDir + `\windows-update`, "Result": KubernetesDir + `\windows-update\result.txt`, "Partial": KubernetesDir + `\windows-update\result.partial`, "Task": "terraform-provider-windows-update",
		"Marker": RebootMarker, "Rounds": OnlineUpdateRounds, "Errors": WUErrors, "ErrorKeys": wuErrorKeys(),
	})
	if err != nil {
		return nil, err
	}
	return append(steps, Step{Name: OnlineUpdateStepName, Script: script, MayReboot: true, RepeatAfterReboot: true}), nil
}

// InstalledOnline is one update the online step installed.
type InstalledOnline struct {
	KB    string
	Size  int64 // bytes (IUpdate.MaxDownloadSize)
	Title string
}

var onlineInstalledLine = regexp.MustCompile(`(?m)^WUA-INSTALLED (KB[0-9]+) ([0-9]+) (.*?)\r?$`)

// ParseOnlineUpdates reads the updates one run of the online step
// installed, in order.
func ParseOnlineUpdates(out string) []InstalledOnline {
	var res []InstalledOnline
	for _, m := range onlineInstalledLine.FindAllStringSubmatch(out, -1) {
		size, _ := strconv.ParseInt(m[2], 10, 64)
		if !slices.ContainsFunc(res, func(i InstalledOnline) bool { return i.KB == m[1] }) {
			res = append(res, InstalledOnline{KB: m[1], Size: size, Title: m[3]})
		}
	}
	return res
}
