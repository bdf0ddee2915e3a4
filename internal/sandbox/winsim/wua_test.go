package winsim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

const (
	wuaRemoteDoc = "https://learn.microsoft.com/en-us/windows/win32/wua_sdk/using-wua-from-a-remote-computer"
	wuaSearchDoc = "https://learn.microsoft.com/en-us/windows/win32/api/wuapi/nf-wuapi-iupdatesearcher-search"
	wuaCodesDoc  = "https://learn.microsoft.com/en-us/windows/win32/wua_sdk/wua-success-and-error-codes-"
)

// TestWindowsUpdateAgent drives the simulated agent over WinRM (a network
// logon) and through a scheduled task running as SYSTEM, against an update
// service whose catalog holds an SSU, the LCU that needs it and an update
// of another classification: each answer must be Windows' or a refusal as
// not modelled.
func TestWindowsUpdateAgent(t *testing.T) {
	ssu := updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	lcu := updatepkg.Package{KB: "KB5070011", Kind: updatepkg.LCU, Build: "20348", UBR: 4405, Requires: "KB5070010", Restart: true}
	other := updatepkg.Package{KB: "KB5070014", Kind: updatepkg.Other, Build: "20348"}
	files := map[string][]byte{}
	var catalog []updatepkg.CatalogEntry
	for _, e := range []struct {
		p              updatepkg.Package
		classification string
	}{{ssu, "Security Updates"}, {lcu, "Security Updates"}, {other, "Updates"}} {
		content := updatepkg.ContentPath + strings.ToLower(e.p.KB) + ".cab"
		files[content] = e.p.Encode()
		catalog = append(catalog, e.p.Entry("Update ("+e.p.KB+")", e.classification, content))
	}
	files[updatepkg.CatalogPath], _ = json.Marshal(catalog)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	booted := make(chan struct{}, 4)
	f := winsimtest.StartHost(t, func(c *winsim.HostConfig) {
		c.OnStateChange = func(_ *winsim.Host, up bool) {
			if up {
				booted <- struct{}{}
			}
		}
	})
	<-booted
	security := "IsInstalled=0 and Type='Software' and CategoryIDs contains '0fa1201d-4330-4fa8-8ae9-b877473b6441'"
	search := "$s = New-Object -ComObject 'Microsoft.Update.Session'\n$r = $s.CreateUpdateSearcher().Search(\"%s\")\n" +
		"for ($i = 0; $i -lt $r.Updates.Count; $i++) { $u = $r.Updates.Item($i); 'KB' + $u.KBArticleIDs.Item(0) + ' ' + $u.Categories.Item(0).Name + ' ' + $u.MaxDownloadSize }\n'result ' + $r.ResultCode"
	// The task's agent script: search, download, install as SYSTEM; its
	// result lands in a file the test reads.
	agent := "$s = New-Object -ComObject 'Microsoft.Update.Session'\n$r = $s.CreateUpdateSearcher().Search(\"" + security + "\")\n" +
		"$c = New-Object -ComObject 'Microsoft.Update.UpdateColl'\nfor ($i = 0; $i -lt $r.Updates.Count; $i++) { $c.Add($r.Updates.Item($i)) | Out-Null }\n" +
		"$d = $s.CreateUpdateDownloader(); $d.Updates = $c; $dr = $d.Download()\n$n = $s.CreateUpdateInstaller(); $n.Updates = $c; $ir = $n.Install()\n" +
		"Set-Content -LiteralPath 'C:\\k\\result.partial' -Value ('download ' + $dr.ResultCode + ' install ' + $ir.ResultCode + ' reboot ' + $ir.RebootRequired + ' count ' + $c.Count)\n" +
		// Written, then renamed, as the provider's update step does: the
		// result's name appears only with its content (a file created is
		// seen before Set-Content has written it).
		"Move-Item -LiteralPath 'C:\\k\\result.partial' -Destination 'C:\\k\\result.txt'\n"
	if err := f.Host.WriteFile(`C:\k\agent.ps1`, []byte(agent)); err != nil {
		t.Fatal(err)
	}
	runTask := "$w = [System.IO.FileSystemWatcher]::new('C:\\k', 'result.txt')\n$sch = New-Object -ComObject 'Schedule.Service'\n$sch.Connect()\n" +
		"$f = $sch.GetFolder('\\')\n$d = $sch.NewTask(0)\n$a = $d.Actions.Create(0)\n$a.Path = 'powershell.exe'\n$a.Arguments = '-NoProfile -File C:\\k\\agent.ps1'\n" +
		"$t = $f.RegisterTaskDefinition('wu', $d, 6, 'SYSTEM', $null, 5)\n$t.Run($null) | Out-Null\n" +
		// As the provider's update step waits: on the watcher's event, for as
		// long as the task takes (a fixed bound failed under load), the test's
		// context bounding it.
		"while (-not (Test-Path -LiteralPath 'C:\\k\\result.txt')) { $c = $w.WaitForChanged('Renamed', 30000) }\n" +
		"'result present'\nGet-Content -LiteralPath 'C:\\k\\result.txt'\nRemove-Item -LiteralPath 'C:\\k\\result.txt'\n$f.DeleteTask('wu', 0)\n"
	for _, tc := range []struct {
		name, script, stdout, stderr, source string
	}{
		{"remote-installer-refused", "$s = New-Object -ComObject 'Microsoft.Update.Session'\n$s.CreateUpdateInstaller()", "",
			"Access is denied. (Exception from HRESULT: 0x80070005 (E_ACCESSDENIED))", wuaRemoteDoc},
		{"remote-downloader-refused", "$s = New-Object -ComObject 'Microsoft.Update.Session'\n$s.CreateUpdateDownloader()", "",
			"E_ACCESSDENIED", wuaRemoteDoc},
		{"windows-update-unreachable", strings.Replace(search, "%s", security, 1), "",
			"Exception calling \"Search\" with \"1\" argument(s): \"Exception from HRESULT: 0x8024402C\"", wuaCodesDoc + " (the sandbox has no route to Microsoft)"},
		{"invalid-criteria", strings.Replace(search, "%s", "IsInstalled=0 and Colour='red'", 1), "", "0x80240032", wuaSearchDoc + " (WU_E_INVALID_CRITERIA)"},
		{"criterion-not-modelled", strings.Replace(search, "%s", "BrowseOnly=0 and IsInstalled=0", 1), "", "does not model the search criterion BrowseOnly = 0", wuaSearchDoc},
		{"wsus-policy", "reg.exe add 'HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate' /v WUServer /t REG_SZ /d '" + srv.URL + "' /f\n" +
			"reg.exe add 'HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate\\AU' /v UseWUServer /t REG_DWORD /d 1 /f\n$LASTEXITCODE",
			"The operation completed successfully.\r\n\r\n0", "", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/reg-add"},
		// The LCU needs its SSU first: only the SSU applies; the other
		// classification is not asked for.
		{"remote-search-wsus", strings.Replace(search, "%s", security, 1), "KB5070010 Security Updates 1", "", wuaRemoteDoc + " (a search is allowed remotely)"},
		{"task-installs-ssu", runTask, "result present\r\ndownload 2 install 2 reboot False count 1", "", "https://learn.microsoft.com/en-us/windows/win32/api/taskschd/nf-taskschd-itaskfolder-registertaskdefinition"},
		{"then-the-lcu", strings.Replace(search, "%s", security, 1), "KB5070011 Security Updates", "", "the LCU applies once its SSU is installed"},
		{"task-installs-lcu", runTask, "download 2 install 2 reboot True count 1", "", "OperationResultCode 2, RebootRequired"},
		{"nothing-left", strings.Replace(search, "%s", security, 1), "result 2", "", "an installed (pending) update is not found again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			stdout, stderr, _, err := clientAs(t, f, "Administrator", winsimtest.Password).RunPSWithContext(ctx, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			stderr = decodeCLIXML(stderr)
			if !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("stdout %q stderr %q\nwant stdout containing %q, stderr containing %q (source: %s)", stdout, stderr, tc.stdout, tc.stderr, tc.source)
			}
		})
	}
	if got := f.Host.InstalledUpdates(); got["KB5070010"] != winsim.PackageInstalled || got["KB5070011"] != winsim.PackageInstallPending || got["KB5070014"] != "" {
		t.Errorf("installed updates %v, want the SSU installed, the LCU pending its restart, KB5070014 not", got)
	}
}
