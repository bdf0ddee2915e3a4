package winsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// The Windows Update Agent (WUA) and its COM API, as far as a script that
// searches, downloads and installs updates uses it: New-Object -ComObject
// Microsoft.Update.Session (ClientApplicationID, CreateUpdateSearcher,
// CreateUpdateDownloader, CreateUpdateInstaller), Microsoft.Update.UpdateColl
// (Add, Item, Count), Microsoft.Update.SystemInfo (RebootRequired), the
// searcher (ServerSelection, Search), the search result (ResultCode,
// Updates), each update (Title, KBArticleIDs, MaxDownloadSize, Categories,
// Identity, EulaAccepted, AcceptEula, IsDownloaded, IsInstalled), the
// downloader and installer (Updates, Download, Install) and their results
// (ResultCode, HResult, RebootRequired, GetUpdateResult). Every other
// member, and every other ProgID, is refused as not modelled.
//
// Sources: "Searching, Downloading, and Installing Updates"
// (https://learn.microsoft.com/en-us/windows/win32/wua_sdk/searching--downloading--and-installing-updates),
// IUpdateSearcher::Search and its criteria
// (https://learn.microsoft.com/en-us/windows/win32/api/wuapi/nf-wuapi-iupdatesearcher-search),
// OperationResultCode
// (https://learn.microsoft.com/en-us/windows/win32/api/wuapi/ne-wuapi-operationresultcode),
// the WUA error codes
// (https://learn.microsoft.com/en-us/windows/win32/wua_sdk/wua-success-and-error-codes-),
// "Using WUA From a Remote Computer"
// (https://learn.microsoft.com/en-us/windows/win32/wua_sdk/using-wua-from-a-remote-computer:
// CreateUpdateDownloader, CreateUpdateInstaller, AcceptEula and
// ISystemInformation are refused to a remote caller with E_ACCESSDENIED),
// the intranet service's policy keys
// (https://learn.microsoft.com/en-us/windows/deployment/update/waas-wu-settings#specify-intranet-microsoft-update-service-location).
//
// The update service is the site's WSUS when the policy names one (UseWUServer
// = 1 and WUServer), else Microsoft's Windows Update, which the sandbox's
// guests have no route to: its name does not resolve (0x8024402C). The
// client fetches the WSUS's catalog over real HTTP (updatepkg.CatalogPath:
// the sandbox's JSON, standing for the MS-WUSP SOAP protocol, which is not
// modelled) and its packages from <server>/Content/; what it cannot reach
// gives the HRESULT WinHTTP's failure maps to. An update applies when its
// build is the host's, it is not installed (or pending), a later cumulative
// update in the catalog does not supersede it, its servicing stack update
// is installed and, for a cumulative update, its revision is above the
// host's. Installing goes through the servicing stack as DISM and wusa do
// (servicing.go).

// The HRESULTs the agent answers with.
const (
	hrAccessDenied              uint32 = 0x80070005 // E_ACCESSDENIED
	hrInvalidArg                uint32 = 0x80070057 // E_INVALIDARG
	hrWUInvalidCriteria         uint32 = 0x80240032 // WU_E_INVALID_CRITERIA
	hrWUNoUpdate                uint32 = 0x80240024 // WU_E_NO_UPDATE
	hrWUNameNotResolved         uint32 = 0x8024402C // WU_E_PT_WINHTTP_NAME_NOT_RESOLVED
	hrWinHTTPCannotConnect      uint32 = 0x80072EFD // ERROR_WINHTTP_CANNOT_CONNECT as an HRESULT
	hrWUHTTPNotFound            uint32 = 0x80244019 // WU_E_PT_HTTP_STATUS_NOT_FOUND
	hrWUHTTPServerError         uint32 = 0x8024401F // WU_E_PT_HTTP_STATUS_SERVER_ERROR
	hrWUHTTPBadGateway          uint32 = 0x80244021 // WU_E_PT_HTTP_STATUS_BAD_GATEWAY
	hrWUHTTPServiceUnavail      uint32 = 0x80244022 // WU_E_PT_HTTP_STATUS_SERVICE_UNAVAIL
	hrWUDownloadFailed          uint32 = 0x80240034 // WU_E_DOWNLOAD_FAILED
	hrFileNotFound              uint32 = 0x80070002 // ERROR_FILE_NOT_FOUND
	wuDownloadDir                      = `C:\Windows\SoftwareDistribution\Download`
	microsoftUpdateHost                = "fe2.update.microsoft.com"
	orcSucceeded, orcWithErrors        = 2, 3 // OperationResultCode
	orcFailed                          = 4
)

// Policy keys of an intranet update service (WSUS).
const (
	WUPolicyKey   = `HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate`
	WUAUPolicyKey = `HKLM\SOFTWARE\Policies\Microsoft\Windows\WindowsUpdate\AU`
)

// comError is the COMException a failed HRESULT becomes in PowerShell: the
// system's message for a Win32 code, "Exception from HRESULT: 0x..." for
// the WU codes, which have no system message.
func comError(hr uint32) error {
	msg := fmt.Sprintf("Exception from HRESULT: 0x%08X", hr)
	switch hr {
	case hrAccessDenied:
		msg = "Access is denied. (Exception from HRESULT: 0x80070005 (E_ACCESSDENIED))"
	case hrInvalidArg:
		msg = "The parameter is incorrect. (Exception from HRESULT: 0x80070057 (E_INVALIDARG))"
	case hrFileNotFound:
		msg = "The system cannot find the file specified. (Exception from HRESULT: 0x80070002)"
	}
	return &pwsh.DotNetError{Type: "System.Runtime.InteropServices.COMException", Message: msg}
}

// networkLogon reports whether ctx runs under a network logon's token
// (WinRM, SSH): WUA's "remote caller".
func networkLogon(ctx context.Context) bool {
	t, ok := ctx.Value(tokenKey{}).(token)
	return ok && t.network
}

// NewComObject is New-Object -ComObject on this host.
func (p *psHost) NewComObject(progID string) (*pwsh.Object, error) {
	switch strings.ToLower(progID) {
	case "microsoft.update.session":
		return p.h.wuaSession(p.ctx), nil
	case "microsoft.update.updatecoll":
		return newUpdateCollection(), nil
	case "microsoft.update.systeminfo":
		return p.h.wuaSystemInfo(p.ctx)
	case "schedule.service":
		return p.h.taskService(p.ctx), nil
	}
	return nil, pwsh.ErrCOMNotModelled
}

func method(o *pwsh.Object, name string, nargs int, f func(args []any) (any, error)) {
	o.Methods[strings.ToLower(name)] = func(args []any) (any, error) {
		if nargs >= 0 && len(args) != nargs {
			return nil, &pwsh.DotNetError{Type: "System.Management.Automation.MethodException",
				Message: fmt.Sprintf("Cannot find an overload for \"%s\" and the argument count: \"%d\".", name, len(args))}
		}
		return f(args)
	}
}

func (h *Host) wuaSession(ctx context.Context) *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{918efd1e-b5d8-4c90-8540-aeb9bdc56f9d}")
	o.Set("ClientApplicationID", "").Set("ReadOnly", false)
	method(o, "CreateUpdateSearcher", 0, func([]any) (any, error) { return h.wuaSearcher(ctx), nil })
	method(o, "CreateUpdateDownloader", 0, func([]any) (any, error) {
		if networkLogon(ctx) {
			return nil, comError(hrAccessDenied)
		}
		return h.wuaDownloader(ctx), nil
	})
	method(o, "CreateUpdateInstaller", 0, func([]any) (any, error) {
		if networkLogon(ctx) {
			return nil, comError(hrAccessDenied)
		}
		return h.wuaInstaller(ctx), nil
	})
	return o
}

// wuaSystemInfo is ISystemInformation: RebootRequired while an installed
// update waits for the restart. Refused to a remote caller.
func (h *Host) wuaSystemInfo(ctx context.Context) (*pwsh.Object, error) {
	if networkLogon(ctx) {
		return nil, comError(hrAccessDenied)
	}
	o := pwsh.NewObject("System.__ComObject#{ade87bf7-7b56-4275-8fab-b9b0e591844b}")
	return o.Set("RebootRequired", h.rebootPending()), nil
}

func (h *Host) rebootPending() bool {
	h.servicing.mu.Lock()
	defer h.servicing.mu.Unlock()
	for _, st := range h.servicing.state.Packages {
		if st == PackageInstallPending {
			return true
		}
	}
	return false
}

// newUpdateCollection is IUpdateCollection.
func newUpdateCollection() *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{07f7438c-7709-4ca5-b518-91279288134e}")
	var items []*pwsh.Object
	o.Set("Count", 0)
	method(o, "Add", 1, func(a []any) (any, error) {
		u, ok := a[0].(*pwsh.Object)
		if !ok || u.Native == nil {
			return nil, comError(hrInvalidArg)
		}
		if _, ok := u.Native.(*wuaUpdate); !ok {
			return nil, comError(hrInvalidArg)
		}
		items = append(items, u)
		o.Set("Count", len(items))
		return len(items) - 1, nil
	})
	method(o, "Item", 1, func(a []any) (any, error) {
		i, ok := a[0].(int)
		if !ok || i < 0 || i >= len(items) {
			return nil, comError(hrInvalidArg)
		}
		return items[i], nil
	})
	o.Native = &items
	return o
}

// collectionUpdates reads the updates of an IUpdateCollection.
func collectionUpdates(v any) ([]*pwsh.Object, bool) {
	o, ok := v.(*pwsh.Object)
	if !ok {
		return nil, false
	}
	items, ok := o.Native.(*[]*pwsh.Object)
	if !ok {
		return nil, false
	}
	return *items, true
}

// wuaUpdate is what an IUpdate stands for.
type wuaUpdate struct {
	entry      updatepkg.CatalogEntry
	server     string
	downloaded string // the package's path on the disk once downloaded
}

func (h *Host) wuaSearcher(ctx context.Context) *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{04c6895d-eaf2-4034-97f3-311de9be413a}")
	o.Set("ServerSelection", 0).Set("Online", true).Set("ClientApplicationID", "")
	method(o, "Search", 1, func(a []any) (any, error) {
		crit, err := parseCriteria(pwsh.Text(a[0]))
		if err != nil {
			return nil, err
		}
		sel, _ := o.Get("ServerSelection")
		online, _ := o.Get("Online")
		if b, ok := online.(bool); !ok || !b {
			return nil, pwsh.NotModelled("IUpdateSearcher.Online = $false (an offline search)")
		}
		server, err := h.updateServer(sel)
		if err != nil {
			return nil, err
		}
		catalog, hr := h.fetchCatalog(ctx, server)
		if hr != 0 {
			return nil, comError(hr)
		}
		found := newUpdateCollection()
		for _, e := range h.applicable(catalog) {
			if !crit.matches(e) {
				continue
			}
			u := &wuaUpdate{entry: e, server: server}
			if _, err := found.Methods["add"]([]any{h.updateObject(ctx, u)}); err != nil {
				return nil, err
			}
		}
		res := pwsh.NewObject("System.__ComObject#{d40cff62-e08c-4498-941a-01e25f0fd33c}")
		return res.Set("ResultCode", orcSucceeded).Set("Updates", found).Set("Warnings", newUpdateCollection()), nil
	})
	return o
}

// updateServer is the service a search goes to: ServerSelection 0 (the
// default: the policy's WSUS, else Windows Update), 1 (the WSUS) or 2
// (Windows Update). Others are not modelled.
func (h *Host) updateServer(sel any) (string, error) {
	wsus := ""
	if v, ok := h.reg.get(WUAUPolicyKey, "UseWUServer"); ok && v.Type == RegDWord && v.DWord == 1 {
		wsus = h.reg.getString(WUPolicyKey, "WUServer")
	}
	switch sel {
	case 0:
		if wsus != "" {
			return wsus, nil
		}
		return "https://" + microsoftUpdateHost, nil
	case 1:
		if wsus == "" {
			return "", pwsh.NotModelled("ServerSelection ssManagedServer without a WUServer policy")
		}
		return wsus, nil
	case 2:
		return "https://" + microsoftUpdateHost, nil
	}
	return "", pwsh.NotModelled(fmt.Sprintf("IUpdateSearcher.ServerSelection %v", sel))
}

// wuaHTTPTimeout bounds one request to the update service.
const wuaHTTPTimeout = 60 * time.Second

// wuaGet fetches a URL of the update service, or the HRESULT its failure
// is. The agent runs as LocalSystem and goes through the machine's WinHTTP
// proxy (netsh winhttp set proxy) or direct when none is set or the bypass
// list names the host: "How the Windows Update client determines which
// proxy server to use"
// (https://learn.microsoft.com/en-us/troubleshoot/windows-server/installing-updates-features-roles/windows-update-client-determines-proxy-server-connect:
// the Automatic Updates service finds a proxy only through netsh or WPAD;
// the scan uses the system proxy, WinHTTP). The sandbox sends the download
// the same way (Windows downloads with BITS or Delivery Optimization, whose
// own proxy discovery is not modelled). WPAD is not modelled: no proxy is
// found without netsh. At a site that lets only its proxy out (Egress), a
// direct connection to an outside host, or one through another proxy, is
// dropped: 0x80072EFD (ERROR_WINHTTP_CANNOT_CONNECT, WinHTTP's 12029 as an
// HRESULT), as WindowsUpdate.log shows a WSUS client whose WinHTTP proxy is
// unset at such a site ("SendRequestUsingProxy failed for
// <http://wsusserver:8530/...>. error 0x80072efd", "Proxy List used:
// <(null)>"; Microsoft's WSUS support note, quoted at
// https://blog.csdn.net/weixin_34067980/article/details/92535160).
// Microsoft's servers are out of the sandbox's reach: their name does not
// resolve.
func (h *Host) wuaGet(ctx context.Context, rawURL string) ([]byte, uint32) {
	if strings.Contains(strings.ToLower(rawURL), "://"+microsoftUpdateHost) {
		return nil, hrWUNameNotResolved
	}
	target, err := url.Parse(rawURL)
	if err != nil || target.Host == "" {
		return nil, hrWUNameNotResolved
	}
	client, err := h.EgressClient(target, h.WinHTTPProxy().For(target))
	if err != nil {
		return nil, hrWinHTTPCannotConnect
	}
	ctx, cancel := context.WithTimeout(ctx, wuaHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, hrWUNameNotResolved
	}
	resp, err := client.Do(req)
	if err != nil {
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return nil, hrWUNameNotResolved
		}
		return nil, hrWinHTTPCannotConnect
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, hrWUHTTPNotFound
	case resp.StatusCode == http.StatusBadGateway:
		// A proxy that could not reach the server.
		return nil, hrWUHTTPBadGateway
	case resp.StatusCode == http.StatusServiceUnavailable:
		return nil, hrWUHTTPServiceUnavail
	case resp.StatusCode != http.StatusOK:
		return nil, hrWUHTTPServerError
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, hrWinHTTPCannotConnect
	}
	return b, 0
}

func (h *Host) fetchCatalog(ctx context.Context, server string) ([]updatepkg.CatalogEntry, uint32) {
	b, hr := h.wuaGet(ctx, strings.TrimRight(server, "/")+updatepkg.CatalogPath)
	if hr != 0 {
		return nil, hr
	}
	var catalog []updatepkg.CatalogEntry
	if err := json.Unmarshal(b, &catalog); err != nil {
		return nil, hrWUHTTPServerError
	}
	return catalog, 0
}

// applicable are the catalog's updates this host needs now.
func (h *Host) applicable(catalog []updatepkg.CatalogEntry) []updatepkg.CatalogEntry {
	build := h.cfg.WindowsBuild[strings.LastIndexByte(h.cfg.WindowsBuild, '.')+1:]
	h.servicing.mu.Lock()
	defer h.servicing.mu.Unlock()
	s := h.servicing.state
	ubr := max(h.cfg.UBR, s.UBR, s.PendingUBR)
	var out []updatepkg.CatalogEntry
	for _, e := range catalog {
		_, installed := s.Packages[e.KB]
		switch {
		case e.Build != build, installed, e.Superseded(catalog):
		case e.Requires != "" && s.Packages[e.Requires] != PackageInstalled:
		case e.Kind == updatepkg.LCU && e.UBR <= ubr:
		default:
			out = append(out, e)
		}
	}
	return out
}

// updateObject is IUpdate for u.
func (h *Host) updateObject(ctx context.Context, u *wuaUpdate) *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{6a92b07a-d821-4682-b423-5c805022cc4d}")
	kbs := pwsh.NewObject("System.__ComObject#{eff90582-2ddc-480f-a06d-60f3fbc362c3}")
	kbs.Set("Count", 1)
	method(kbs, "Item", 1, func(a []any) (any, error) {
		if i, ok := a[0].(int); !ok || i != 0 {
			return nil, comError(hrInvalidArg)
		}
		return strings.TrimPrefix(u.entry.KB, "KB"), nil
	})
	cat := pwsh.NewObject("System.__ComObject#{81ddc1b8-9d35-47a6-b471-5b80f519223b}")
	cat.Set("Name", u.entry.Classification).Set("CategoryID", updatepkg.Classifications[u.entry.Classification]).Set("Type", "UpdateClassification")
	cats := pwsh.NewObject("System.__ComObject#{3a56bfb8-576c-43f7-9335-fe4838fd7e37}")
	cats.Set("Count", 1)
	method(cats, "Item", 1, func(a []any) (any, error) {
		if i, ok := a[0].(int); !ok || i != 0 {
			return nil, comError(hrInvalidArg)
		}
		return cat, nil
	})
	ident := pwsh.NewObject("System.__ComObject#{46297823-9940-4c09-aed9-cd3ea6d05968}")
	ident.Set("UpdateID", u.entry.UpdateID).Set("RevisionNumber", 200)
	// The sandbox's updates carry no license terms: EulaAccepted is true,
	// as it is for Windows' cumulative updates.
	o.Set("Title", u.entry.Title).Set("KBArticleIDs", kbs).Set("MaxDownloadSize", u.entry.Size).Set("Categories", cats).
		Set("Identity", ident).Set("EulaAccepted", true).Set("IsDownloaded", false).Set("IsInstalled", false).
		Set("IsHidden", false).Set("RebootRequired", false)
	method(o, "AcceptEula", 0, func([]any) (any, error) {
		if networkLogon(ctx) {
			return nil, comError(hrAccessDenied)
		}
		o.Set("EulaAccepted", true)
		return nil, nil
	})
	o.Native = u
	return o
}

func (h *Host) wuaDownloader(ctx context.Context) *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{68f1c6f9-7ecc-4666-a464-247fe12496c3}")
	o.Set("Updates", nil).Set("ClientApplicationID", "")
	method(o, "Download", 0, func([]any) (any, error) {
		updates, err := operationUpdates(o)
		if err != nil {
			return nil, err
		}
		var results []updateResult
		for _, uo := range updates {
			u := uo.Native.(*wuaUpdate)
			r := updateResult{code: orcSucceeded}
			body, hr := h.wuaGet(ctx, strings.TrimRight(u.server, "/")+u.entry.Content)
			if hr == 0 {
				file := wuDownloadDir + `\` + u.entry.UpdateID + `\` + u.entry.Content[strings.LastIndexByte(u.entry.Content, '/')+1:]
				if err := h.fs.MkdirAll(parentOf(file)); err != nil {
					return nil, err
				}
				if err := h.fs.WriteFile(file, body, false); err != nil {
					return nil, err
				}
				u.downloaded = file
				uo.Set("IsDownloaded", true)
			} else {
				r = updateResult{code: orcFailed, hr: hrWUDownloadFailed}
			}
			results = append(results, r)
		}
		return resultObject("System.__ComObject#{daa4fdd0-4727-4dbe-a1e7-745dca317144}", results), nil
	})
	return o
}

func (h *Host) wuaInstaller(ctx context.Context) *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{7b929c68-ccdc-4226-96b1-8724600b54c2}")
	o.Set("Updates", nil).Set("ClientApplicationID", "").Set("AllowSourcePrompts", true).Set("ForceQuiet", false)
	method(o, "Install", 0, func([]any) (any, error) {
		updates, err := operationUpdates(o)
		if err != nil {
			return nil, err
		}
		var results []updateResult
		for _, uo := range updates {
			u := uo.Native.(*wuaUpdate)
			if u.downloaded == "" {
				return nil, pwsh.NotModelled("IUpdateInstaller.Install of an update not downloaded")
			}
			outcome, _ := h.addPackage(ctx, u.downloaded, "wua")
			r := updateResult{code: orcSucceeded}
			switch outcome {
			case servicingRestartNeeded:
				r.reboot = true
			case servicingNotApplicable:
				r = updateResult{code: orcFailed, hr: HResultWUNotApplicable}
			case servicingNeedsSSU:
				r = updateResult{code: orcFailed, hr: HResultCBSNewServicingStackRequired}
			case servicingBadSignature:
				r = updateResult{code: orcFailed, hr: HResultTrustBadDigest}
			case servicingNotAPackage:
				r = updateResult{code: orcFailed, hr: hrFileNotFound}
			}
			if r.code == orcSucceeded {
				uo.Set("IsInstalled", !r.reboot).Set("RebootRequired", r.reboot)
			}
			results = append(results, r)
		}
		return resultObject("System.__ComObject#{a43c56d6-7451-48d4-af96-b6cd2d0d9b7a}", results), nil
	})
	return o
}

// operationUpdates are the Updates a downloader or installer was given.
func operationUpdates(o *pwsh.Object) ([]*pwsh.Object, error) {
	v, _ := o.Get("Updates")
	updates, ok := collectionUpdates(v)
	if !ok {
		return nil, comError(hrInvalidArg)
	}
	if len(updates) == 0 {
		return nil, comError(hrWUNoUpdate)
	}
	return updates, nil
}

type updateResult struct {
	code   int
	hr     uint32
	reboot bool
}

// resultObject is IDownloadResult or IInstallationResult: the overall
// code (2 all succeeded, 3 some failed, 4 all failed), the first failure's
// HResult when all failed, RebootRequired (installation) and each update's
// result.
func resultObject(typ string, results []updateResult) *pwsh.Object {
	o := pwsh.NewObject(typ)
	failed, reboot := 0, false
	var hr uint32
	for _, r := range results {
		if r.code != orcSucceeded {
			failed++
			if hr == 0 {
				hr = r.hr
			}
		}
		reboot = reboot || r.reboot
	}
	code := orcSucceeded
	switch {
	case failed == len(results):
		code = orcFailed
	case failed > 0:
		code, hr = orcWithErrors, 0
	}
	o.Set("ResultCode", code).Set("HResult", int(int32(hr))).Set("RebootRequired", reboot)
	method(o, "GetUpdateResult", 1, func(a []any) (any, error) {
		i, ok := a[0].(int)
		if !ok || i < 0 || i >= len(results) {
			return nil, comError(hrInvalidArg)
		}
		r := pwsh.NewObject("System.__ComObject#{d940f0f8-3cbb-4fd0-993f-471e7f2328ad}")
		return r.Set("ResultCode", results[i].code).Set("HResult", int(int32(results[i].hr))).Set("RebootRequired", results[i].reboot), nil
	})
	return o
}
