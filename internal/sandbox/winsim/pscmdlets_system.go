package winsim

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// downloadTimeout bounds one Invoke-WebRequest of the simulated guest.
const downloadTimeout = 2 * time.Minute

// knownFeatures are Windows Server features Install-WindowsFeature knows
// (Get-WindowsFeature's names); any other name is invalid there.
var knownFeatures = []string{"Containers", "Hyper-V", "Hyper-V-PowerShell", "Web-Server", "NET-Framework-45-Core", "Windows-Defender", "RSAT-AD-PowerShell", "Telnet-Client", "FS-SMB1", "Failover-Clustering"}

// knownCapabilities are Add-WindowsCapability names the host knows.
var knownCapabilities = []string{"OpenSSH.Server~~~~0.0.1.0", "OpenSSH.Client~~~~0.0.1.0"}

func systemCmdlets() []*Cmdlet {
	return []*Cmdlet{
		{Name: "Invoke-WebRequest", Class: "Microsoft.PowerShell.Commands.InvokeWebRequestCommand", Aliases: []string{"iwr", "wget", "curl"},
			Source: util + "invoke-webrequest?view=powershell-5.1", Behaviour: "a real HTTP GET from this machine, through -Proxy when given (never HTTP_PROXY: Windows PowerShell 5.1 takes the proxy from -Proxy or Internet Options); -OutFile saves the body, else an object with StatusCode and Content; HTTP errors are WebException; at a site reachable only through its proxy (Faults.Egress) a direct connection out fails",
			Params: []*Param{P("Uri", "System.Uri", 0, Mandatory), P("OutFile", "System.String", -1), P("UseBasicParsing", "SwitchParameter", -1),
				P("Method", "Microsoft.PowerShell.Commands.WebRequestMethod", -1, Enum("Default", "Get", "Head", "Post", "Put", "Delete", "Trace", "Options", "Merge", "Patch")),
				P("TimeoutSec", "System.Int32", -1), P("Headers", "System.Collections.IDictionary", -1, Unmodelled), P("Body", "System.Object", -1, Unmodelled),
				P("UserAgent", "System.String", -1, Unmodelled), P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled),
				P("Proxy", "System.Uri", -1), P("PassThru", "SwitchParameter", -1, Unmodelled), P("InFile", "System.String", -1, Unmodelled),
				P("ContentType", "System.String", -1, Unmodelled), P("MaximumRedirection", "System.Int32", -1, Unmodelled)},
			Run: runInvokeWebRequest},
		{Name: "Expand-Archive", Class: "Expand-Archive", ShouldProcess: true,
			Source: "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.archive/expand-archive?view=powershell-5.1", Behaviour: "unzips a .zip into the destination directory",
			// ExpandArchive: sets "Path" (default) and "LiteralPath".
			DefaultSet: "Path",
			Params: []*Param{P("Path", "System.String", 0, In("Path"), Mandatory), P("LiteralPath", "System.String", -1, Alias("PSPath"), In("LiteralPath"), Mandatory),
				P("DestinationPath", "System.String", 1), P("Force", "SwitchParameter", -1)},
			Run: func(c *Call) error {
				p, _, err := itemPath(c)
				if err != nil || p == "" {
					return err
				}
				fs := ps(c).h.fs
				data, rerr := fs.ReadFile(p)
				if rerr != nil {
					return c.Throw(c.Fail(fmt.Sprintf("The path '%s' either does not exist or is not a valid file system path.", p), "InvalidArgument", p, "InvalidOperationException", "ArchiveCmdletPathNotFound,Expand-Archive", "System.InvalidOperationException"))
				}
				if !c.Switch("Force") {
					if f, clash := zipCollides(fs, data, c.Str("DestinationPath")); clash {
						// Windows fails (ExpandArchiveFileAlreadyExists)
						// unless -Force; its wording is not modelled.
						return c.Unmodelled("Expand-Archive without -Force onto the existing file " + f)
					}
				}
				if xerr := extractArchive(fs, data, c.Str("DestinationPath"), "zip"); xerr != nil {
					return c.Throw(c.Fail(fmt.Sprintf(".zip is the only supported archive file format. %s is not a valid archive.", fs.Clean(p)), "InvalidArgument", p, "IOException", "NotSupportedArchiveFileExtension,Expand-Archive", "System.IO.IOException"))
				}
				return nil
			}},
		{Name: "Get-WindowsFeature", Class: "Microsoft.Windows.ServerManager.Commands.GetWindowsFeatureCommand",
			Source: "https://learn.microsoft.com/en-us/powershell/module/servermanager/get-windowsfeature", Behaviour: "the feature with Name, InstallState and Installed (InstallPending until the next boot); an unknown name outputs nothing",
			Params: []*Param{P("Name", "System.String[]", 0), P("Vhd", "System.String", -1, Unmodelled), P("ComputerName", "System.String", -1, Alias("Cn"), Unmodelled),
				P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled), P("LogPath", "System.String", -1, Unmodelled)},
			Run: func(c *Call) error {
				names := c.Strs("Name")
				if !c.Has("Name") {
					names = knownFeatures
				}
				for _, n := range names {
					canon, ok := pwshEnum(knownFeatures, n)
					if !ok {
						continue
					}
					state := ps(c).h.features.get(canon)
					if state == "" {
						state = "Available"
					}
					o := NewObject("Microsoft.Windows.ServerManager.Commands.Feature")
					o.Str = fmt.Sprintf("[%s] %s", map[bool]string{true: "X", false: " "}[state == FeatureInstalled], canon)
					c.Write(o.Set("Name", canon).Set("DisplayName", canon).Set("InstallState", state).Set("Installed", state == FeatureInstalled))
				}
				return nil
			}},
		{Name: "Install-WindowsFeature", Class: "Microsoft.Windows.ServerManager.Commands.AddWindowsFeatureCommand", Aliases: []string{"Add-WindowsFeature"}, ShouldProcess: true,
			Source: "https://learn.microsoft.com/en-us/powershell/module/servermanager/install-windowsfeature", Behaviour: "installs a known feature; RestartNeeded is Yes until the next boot completes it; an unknown name is an error",
			Params: []*Param{P("Name", "Microsoft.Windows.ServerManager.Commands.Feature[]", 0, Mandatory), P("Restart", "SwitchParameter", -1, Unmodelled),
				P("IncludeAllSubFeature", "SwitchParameter", -1, Unmodelled), P("IncludeManagementTools", "SwitchParameter", -1, Unmodelled), P("Source", "System.String[]", -1, Unmodelled),
				P("Vhd", "System.String", -1, Unmodelled), P("ComputerName", "System.String", -1, Alias("Cn"), Unmodelled), P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled),
				P("LogPath", "System.String", -1, Unmodelled), P("ConfigurationFilePath", "System.String", -1, Unmodelled)},
			Run: func(c *Call) error {
				restart := false
				for _, n := range itemsOf(c.Value("Name")) {
					canon, ok := pwshEnum(knownFeatures, Text(n))
					if !ok {
						return c.Throw(c.Fail(fmt.Sprintf("ArgumentNotValid: The role, role service, or feature name is not valid: '%s'. The name was not found.", Text(n)),
							"InvalidArgument", Text(n), "Exception", "NameDoesNotExist", "System.Exception"))
					}
					r, err := ps(c).h.features.install(canon)
					if err != nil {
						return c.Throw(c.Fail(err.Error(), "NotSpecified", canon, "Exception", "InstallFailed", "System.Exception"))
					}
					restart = restart || r
				}
				o := NewObject("Microsoft.Windows.ServerManager.Commands.FeatureOperationResult")
				needed := map[bool]string{true: "Yes", false: "No"}[restart]
				o.Str = "True    " + needed
				c.Write(o.Set("Success", true).Set("RestartNeeded", needed).Set("ExitCode", map[bool]string{true: "SuccessRestartRequired", false: "NoChangeNeeded"}[restart]))
				return nil
			}},
		{Name: "Add-WindowsCapability", Class: "Microsoft.Dism.Commands.AddWindowsCapabilityCommand",
			Source: "https://learn.microsoft.com/en-us/powershell/module/dism/add-windowscapability", Behaviour: "records a known capability (OpenSSH.Server/Client) as installed; it does not create the sshd service",
			Params: []*Param{P("Name", "System.String", -1), P("Online", "SwitchParameter", -1), P("Path", "System.String", -1, Unmodelled),
				P("Source", "System.String[]", -1, Unmodelled), P("LimitAccess", "SwitchParameter", -1, NoEffect("the simulated host contacts no Windows Update source, which -LimitAccess forbids")), P("NoRestart", "SwitchParameter", -1, NoEffect("the modelled capabilities never need a restart (RestartNeeded False)")),
				P("WindowsDirectory", "System.String", -1, Unmodelled), P("SystemDrive", "System.String", -1, Unmodelled), P("LogPath", "System.String", -1, Unmodelled),
				P("ScratchDirectory", "System.String", -1, Unmodelled), P("LogLevel", "Microsoft.Dism.Commands.LogLevel", -1, Unmodelled)},
			Run: func(c *Call) error {
				if !c.Switch("Online") {
					return c.Unmodelled("offline images (-Path)")
				}
				name, ok := pwshEnum(knownCapabilities, c.Str("Name"))
				if !ok {
					return c.Unmodelled("the capability " + c.Str("Name"))
				}
				o := NewObject("Microsoft.Dism.Commands.ImageObject")
				o.Str = "Path :\r\nOnline : True\r\nRestartNeeded : False"
				c.Write(o.Set("Path", "").Set("Online", true).Set("RestartNeeded", false).Set("Name", name))
				return nil
			}},
		firewallGet(), firewallNew(), firewallSet(), firewallPortFilter(), testNetConnection(),
		{Name: "Restart-Computer", Class: "Microsoft.PowerShell.Commands.RestartComputerCommand", ShouldProcess: true,
			Source: mgmt + "restart-computer?view=powershell-5.1", Behaviour: "the script finishes, then the host goes down and comes back after RebootDelay",
			Params: []*Param{P("Force", "SwitchParameter", -1, Alias("f"), NoEffect("without it Windows refuses only while other users are logged on interactively, and none are")), P("ComputerName", "System.String[]", 0, Alias("CN", "__SERVER", "Server", "IPAddress"), Unmodelled),
				P("Wait", "SwitchParameter", -1, Unmodelled), P("Credential", "System.Management.Automation.PSCredential", 1, Unmodelled), P("Timeout", "System.Int32", -1, Unmodelled)},
			Run: func(c *Call) error { ps(c).reboot = true; return nil }},
		{Name: "Stop-Computer", Class: "Microsoft.PowerShell.Commands.StopComputerCommand", ShouldProcess: true,
			Source: mgmt + "stop-computer?view=powershell-5.1", Behaviour: "the command finishes, then the host goes down for good (HostConfig.OnShutdown)",
			Params: []*Param{P("Force", "SwitchParameter", -1, NoEffect("without it Windows refuses only while other users are logged on interactively, and none are")), P("ComputerName", "System.String[]", 0, Alias("CN", "__SERVER", "Server", "IPAddress"), Unmodelled),
				P("Credential", "System.Management.Automation.PSCredential", 1, Unmodelled)},
			Run: func(c *Call) error { ps(c).shutdown = true; return nil }},
		{Name: "Start-Process", Class: "Microsoft.PowerShell.Commands.StartProcessCommand", Aliases: []string{"saps", "start"},
			Source: mgmt + "start-process?view=powershell-5.1", Behaviour: "starts the program with -ArgumentList joined by spaces into one command line (which the program splits as CommandLineToArgvW does); with -Wait runs it to completion, whatever its subsystem (-PassThru: a System.Diagnostics.Process whose ExitCode is the program's), else returns at once while it runs on until it exits or the host goes down (-PassThru without -Wait refused: a process still running)",
			Params: []*Param{P("FilePath", "System.String", 0, Mandatory, Alias("PSPath")), P("ArgumentList", "System.String[]", 1, Alias("Args")),
				P("Wait", "SwitchParameter", -1), P("NoNewWindow", "SwitchParameter", -1), P("PassThru", "SwitchParameter", -1),
				P("WorkingDirectory", "System.String", -1, Unmodelled), P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled),
				P("RedirectStandardOutput", "System.String", -1, Unmodelled), P("RedirectStandardError", "System.String", -1, Unmodelled),
				P("RedirectStandardInput", "System.String", -1, Unmodelled), P("WindowStyle", "System.Diagnostics.ProcessWindowStyle", -1, Enum("Normal", "Hidden", "Minimized", "Maximized")),
				P("Verb", "System.String", -1, Unmodelled), P("LoadUserProfile", "SwitchParameter", -1, Unmodelled), P("UseNewEnvironment", "SwitchParameter", -1, Unmodelled)},
			Run: runStartProcess},
	}
}

// runStartProcess is Start-Process (StartProcessCommand.BeginProcessing,
// PowerShell/PowerShell src/Microsoft.PowerShell.Commands.Management/
// commands/management/Process.cs): the program gets one command line, the
// -ArgumentList elements joined by a space as Windows PowerShell 5.1 joins
// them (startInfo.Arguments = string.Join(" ", ArgumentList): an element
// holding a space is not re-quoted), which the program splits as
// CommandLineToArgvW does; the cmdlet waits for the process only with
// -Wait (WaitForExit), else returns as soon as it started. -NoNewWindow
// and -WindowStyle choose the console window, which the host does not
// show: the output goes nowhere either way (the console of the session
// that started it is not captured by WinRM, SSH or guest operations).
func runStartProcess(c *Call) error {
	h := ps(c)
	p, ok := h.ResolveNative(c.Str("FilePath"))
	if !ok {
		return c.Throw(c.Fail("This command cannot be run due to the error: The system cannot find the file specified.", "InvalidOperation", "", "InvalidOperationException", "InvalidOperationException", "System.InvalidOperationException"))
	}
	if c.Switch("NoNewWindow") && c.Has("WindowStyle") {
		// Process.cs: "Parameters '-NoNewWindow' and '-WindowStyle' cannot
		// be specified at the same time." (ContradictParametersSpecified).
		return c.Throw(c.Fail("Parameters \"-NoNewWindow\" and \"-WindowStyle\" cannot be specified at the same time.", "InvalidOperation", "", "InvalidOperationException", "InvalidOperationException", "System.InvalidOperationException"))
	}
	run := &pwsh.NativeRun{Path: p, Args: startProcessArgs(c.Strs("ArgumentList")), Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
	if !c.Switch("Wait") {
		// The process object's ExitCode is not known yet; reading it is not
		// modelled, so -PassThru alone is refused.
		if c.Switch("PassThru") {
			return c.Unmodelled("-PassThru without -Wait (a process still running)")
		}
		return startProcessDetached(c, h, run)
	}
	// -Wait waits for the process to exit (the cmdlet's page: "-Wait:
	// Indicates that this cmdlet waits for the specified process and its
	// descendants to complete before accepting more input"), whatever the
	// program's subsystem: not through the call operator's rules
	// (RunNative), which leave a GUI program running.
	code, err := h.h.runProgram(c.Ctx, run.Path, run.Args, h.env, run.Stdin, run.Stdout, run.Stderr)
	if err != nil {
		return c.Throw(c.Fail("This command cannot be run due to the error: "+err.Error(), "InvalidOperation", "", "InvalidOperationException", "InvalidOperationException", "System.InvalidOperationException"))
	}
	if c.Switch("PassThru") {
		// System.Diagnostics.Process of an exited process:
		// https://learn.microsoft.com/en-us/dotnet/api/system.diagnostics.process.exitcode
		name := run.Path[strings.LastIndexAny(run.Path, `\/`)+1:]
		name = strings.TrimSuffix(strings.TrimSuffix(name, ".exe"), ".EXE")
		o := pwsh.NewObject("System.Diagnostics.Process")
		o.Str = "System.Diagnostics.Process (" + name + ")"
		c.Write(o.Set("ExitCode", code).Set("HasExited", true).Set("ProcessName", name))
	}
	return nil
}

// startProcessArgs is what the program receives of -ArgumentList: the
// elements joined by one space (Windows PowerShell 5.1's
// string.Join(" ", ArgumentList)), split as CommandLineToArgvW splits a
// command line, so '"C:\Program Files\x"' stays one argument and
// 'a b' becomes two.
func startProcessArgs(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return CommandLineToArgv(strings.Join(list, " "))
}

// startProcessDetached starts the program without waiting (Start-Process
// without -Wait: Process.Start, then the cmdlet ends). The process gets a
// copy of the session's environment as it is now, and runs on after the
// script until it exits or the host goes down (UpContext). Not modelled:
// the job object of a WinRM or OpenSSH session, which ends such a process
// when the shell closes.
func startProcessDetached(c *Call, h *psHost, run *pwsh.NativeRun) error {
	env := make(map[string]string, len(h.env))
	for k, v := range h.env {
		env[k] = v
	}
	// The caller's token and logon stay (context values); its end does not.
	ctx, cancel := context.WithCancel(context.WithoutCancel(h.ctx))
	stop := context.AfterFunc(h.h.UpContext(), cancel)
	if h.h.UpContext().Err() != nil {
		cancel()
		return c.Unmodelled("starting a process while the host goes down")
	}
	if _, isSystem := systemProgram(run.Path); !isSystem && !strings.HasSuffix(strings.ToLower(run.Path), ".cmd") && !strings.HasSuffix(strings.ToLower(run.Path), ".bat") {
		// Process.Start fails at once for a file Windows cannot run, before
		// the cmdlet returns (ERROR_BAD_EXE_FORMAT and the like).
		if _, _, err := h.h.ResolveProgram(run.Path); err != nil {
			cancel()
			stop()
			reason := err.Error()
			var ec *ErrorCode
			if errors.As(err, &ec) && ec.Code == 193 {
				reason = errNotExecutable.Error()
			}
			return c.Throw(c.Fail("This command cannot be run due to the error: "+reason, "InvalidOperation", "", "InvalidOperationException", "InvalidOperationException", "System.InvalidOperationException"))
		}
	}
	if !h.h.spawn(func() {
		defer cancel()
		defer stop()
		_, _ = h.h.runProgram(ctx, run.Path, run.Args, env, run.Stdin, run.Stdout, run.Stderr) // no one waits for its result
	}) {
		cancel()
		stop()
	}
	return nil
}

func pwshEnum(names []string, s string) (string, bool) {
	for _, n := range names {
		if strings.EqualFold(n, strings.TrimSpace(s)) {
			return n, true
		}
	}
	return "", false
}

func runInvokeWebRequest(c *Call) error {
	uri := c.Str("Uri")
	webErr := func(msg string) error {
		return c.Error(c.Fail(msg, "InvalidOperation", "System.Net.HttpWebRequest", "WebException",
			"WebCmdletWebResponseException", "System.Net.WebException"))
	}
	if m := c.Str("Method"); m != "" && m != "Default" && m != "Get" {
		return c.Unmodelled("-Method " + m)
	}
	if !c.Switch("UseBasicParsing") && !c.Has("OutFile") {
		// Without -UseBasicParsing, Windows PowerShell parses the response
		// with Internet Explorer's engine (ParsedHtml, Forms), which
		// Server Core does not have: not modelled.
		return c.Unmodelled("Invoke-WebRequest without -UseBasicParsing (a response parsed by Internet Explorer's engine)")
	}
	timeout := downloadTimeout
	if c.Has("TimeoutSec") {
		timeout = time.Duration(c.Value("TimeoutSec").(int)) * time.Second
	}
	ctx, cancel := context.WithTimeout(c.Ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return c.Throw(c.Fail(fmt.Sprintf("Cannot bind parameter 'Uri'. Cannot convert value \"%s\" to type \"System.Uri\". Error: \"Invalid URI: The format of the URI could not be determined.\"", uri),
			"InvalidArgument", "", "ParameterBindingException", "CannotConvertArgumentNoMessage", "System.Management.Automation.ParameterBindingException"))
	}
	client, err := ps(c).h.EgressClient(req.URL, c.Str("Proxy"))
	if err != nil {
		return webErr("Unable to connect to the remote server")
	}
	resp, err := client.Do(req)
	if err != nil {
		return webErr("Unable to connect to the remote server")
	}
	defer func() { _ = resp.Body.Close() }() // read in full below
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return webErr(fmt.Sprintf("The remote server returned an error: (%d) %s.", resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return webErr("The underlying connection was closed: " + err.Error())
	}
	// The bytes take the site's link speed (the latency model's
	// DownloadLink; nothing when it is off), within -TimeoutSec.
	if m := ps(c).h.cfg.Latency; m.Sleep(ctx, m.Move(latency.DownloadLink, int64(len(body)))) != nil {
		return webErr("The operation has timed out.")
	}
	if c.Has("OutFile") {
		fs := ps(c).h.fs
		out := fs.Clean(c.Str("OutFile"))
		if ok, _ := fs.Stat(parentOf(out)); !ok {
			return c.Error(c.Fail(fmt.Sprintf("Could not find a part of the path '%s'.", out), "NotSpecified", "", "DirectoryNotFoundException",
				"System.IO.DirectoryNotFoundException", "System.IO.DirectoryNotFoundException"))
		}
		return fs.WriteFile(out, body, false)
	}
	o := NewObject("Microsoft.PowerShell.Commands.BasicHtmlWebResponseObject")
	c.Write(o.Set("StatusCode", resp.StatusCode).Set("StatusDescription", http.StatusText(resp.StatusCode)).Set("Content", string(body)))
	return nil
}

// zipCollides reports the first file of a .zip that already exists under
// dir (Expand-Archive refuses to overwrite it without -Force).
func zipCollides(fs *vfs, data []byte, dir string) (string, bool) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", false // extractArchive reports the bad archive
	}
	for _, f := range zr.File {
		name := strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(f.Name, `\`, "/")), "/")
		if f.FileInfo().IsDir() || name == "" || name == "." {
			continue
		}
		p := strings.TrimRight(dir, `\`) + `\` + strings.ReplaceAll(name, "/", `\`)
		if ok, isDir := fs.Stat(p); ok && !isDir {
			return fs.Clean(p), true
		}
	}
	return "", false
}

// extractArchive unpacks a .zip or .tar.gz into dir of the virtual filesystem.
func extractArchive(fs *vfs, data []byte, dir, kind string) error {
	write := func(name string, body []byte) error {
		name = strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(name, `\`, "/")), "/")
		if name == "" || name == "." {
			return nil
		}
		return fs.WriteFile(strings.TrimRight(dir, `\`)+`\`+strings.ReplaceAll(name, "/", `\`), body, false)
	}
	if kind == "zip" {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return err
		}
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return err
			}
			body, err := io.ReadAll(rc)
			_ = rc.Close() // read in full above
			if err != nil {
				return err
			}
			if err := write(f.Name, body); err != nil {
				return err
			}
		}
		return nil
	}
	var r io.Reader = bytes.NewReader(data)
	if gz, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := write(hdr.Name, body); err != nil {
			return err
		}
	}
}

func (h *Host) firewall() []FirewallRule {
	var rules []FirewallRule
	if b, err := os.ReadFile(filepath.Join(h.cfg.Dir, "firewall.json")); err == nil {
		_ = json.Unmarshal(b, &rules)
	}
	return rules
}

func ruleObject(r FirewallRule) *pwsh.Object {
	o := NewObject("Microsoft.Management.Infrastructure.CimInstance#root/standardcimv2/MSFT_NetFirewallRule")
	o.Str = "Name : " + r.Name + "\r\nDisplayName : " + r.DisplayName
	profile := r.Profile
	if profile == "" {
		profile = "Any"
	}
	// Profile is a property of MSFT_NetFirewallRule; RemoteAddress belongs
	// to its address filter (Get-NetFirewallAddressFilter, not modelled),
	// shown here on the rule so that scripts and tests can read it.
	remote := make([]any, 0, len(r.RemoteAddress))
	for _, a := range r.RemoteAddress {
		remote = append(remote, a)
	}
	if len(remote) == 0 {
		remote = append(remote, "Any")
	}
	return o.Set("Name", r.Name).Set("DisplayName", r.DisplayName).Set("Description", r.Description).Set("Group", r.Group).Set("DisplayGroup", r.Group).
		Set("Direction", r.Direction).Set("Action", r.Action).Set("Enabled", r.Enabled).
		Set("Profile", profile).Set("RemoteAddress", remote)
}

// portFilterObject is a rule's MSFT_NetProtocolPortFilter
// (Get-NetFirewallPortFilter): "Filter objects ... are created with each
// firewall rule. The filter objects and rules are always one-to-one"
// (New-NetFirewallRule, learn.microsoft.com). A rule without -Protocol or
// -LocalPort has Any there; RemotePort is always Any here (-RemotePort is
// refused as not modelled).
func portFilterObject(r FirewallRule) *pwsh.Object {
	o := NewObject("Microsoft.Management.Infrastructure.CimInstance#root/standardcimv2/MSFT_NetProtocolPortFilter")
	protocol := r.Protocol
	if protocol == "" {
		protocol = "Any"
	}
	local := make([]any, 0, len(r.LocalPort))
	for _, p := range r.LocalPort {
		local = append(local, p)
	}
	if len(local) == 0 {
		local = append(local, "Any")
	}
	o.Str = "Protocol : " + protocol + "\r\nLocalPort : " + Text(local)
	return o.Set("InstanceID", r.Name).Set("Protocol", protocol).Set("LocalPort", local).Set("RemotePort", []any{"Any"}).
		Set("IcmpType", []any{"Any"}).Set("DynamicTarget", "Any")
}

const netsec = "https://learn.microsoft.com/en-us/powershell/module/netsecurity/"

func firewallGet() *Cmdlet {
	return &Cmdlet{Name: "Get-NetFirewallRule", Class: "Get-NetFirewallRule",
		Source: netsec + "get-netfirewallrule", Behaviour: "the rules of firewall.json: a disk Install wrote has the stock WinRM rules (StockFirewallRules), then those New-NetFirewallRule created (by -Name), each with Name, DisplayName, Direction, Action, Enabled, Profile and RemoteAddress (on Windows a property of its address filter, Get-NetFirewallAddressFilter, which is not modelled); a missing name is CmdletizationQuery_NotFound_Name",
		Params: []*Param{P("Name", "System.String[]", 0, Alias("ID")), P("DisplayName", "System.String[]", -1, Unmodelled), P("All", "SwitchParameter", -1),
			P("Direction", "Direction[]", -1, Unmodelled), P("Enabled", "Enabled[]", -1, Unmodelled), P("PolicyStore", "System.String", -1, Unmodelled),
			P("CimSession", "Microsoft.Management.Infrastructure.CimSession[]", -1, Alias("Session"), Unmodelled), P("AsJob", "SwitchParameter", -1, Unmodelled)},
		Run: func(c *Call) error {
			rules := ps(c).h.firewall()
			if c.Switch("All") || !c.Has("Name") {
				for _, r := range rules {
					c.Write(ruleObject(r))
				}
				return nil
			}
			for _, n := range c.Strs("Name") {
				found := false
				for _, r := range rules {
					if strings.EqualFold(r.Name, n) {
						c.Write(ruleObject(r))
						found = true
					}
				}
				if !found {
					if err := c.Error(c.Fail(fmt.Sprintf("No MSFT_NetFirewallRule objects found with property 'Name' equal to '%s'.  Verify the value of the property and retry.", n),
						"ObjectNotFound", n, "CimJobException", "CmdletizationQuery_NotFound_Name", "Microsoft.PowerShell.Cmdletization.Cim.CimJobException")); err != nil {
						return err
					}
				}
			}
			return nil
		}}
}

// checkPortFilter validates -Protocol and -LocalPort as the rule's port
// filter takes them. -Protocol: "The acceptable values for this parameter
// are: 0-255, TCP, UDP, ICMPv4, or ICMPv6 ... The default value is Any";
// -LocalPort: "If a port number is identified by using port1 or port2,
// then this parameter must be set to TCP or UDP" (-Protocol,
// New-NetFirewallRule, learn.microsoft.com). TCP, UDP and Any are
// modelled (canonical spelling), the rest refused; ports are numbers
// 0-65535, ranges a-b and Any; the port keywords (RPC, RPCEPMap,
// IPHTTPSIn, PlayToDiscovery, ...) are refused. A port with protocol Any
// is refused: Windows rejects it (a CimException, HRESULT 0x80070057,
// whose exact wording the simulator does not claim to know), it is never
// stored as a rule that admits nothing it says.
func checkPortFilter(c *Call, r *FirewallRule) error {
	switch {
	case r.Protocol == "" || strings.EqualFold(r.Protocol, "Any"):
		r.Protocol = "Any"
	case strings.EqualFold(r.Protocol, "TCP"), strings.EqualFold(r.Protocol, "UDP"):
		r.Protocol = strings.ToUpper(r.Protocol)
	default:
		return c.Unmodelled("-Protocol " + r.Protocol)
	}
	for _, p := range r.LocalPort {
		if strings.EqualFold(p, "Any") {
			continue
		}
		lo, hi, isRange := strings.Cut(p, "-")
		if !isPort(lo) || (isRange && !isPort(hi)) {
			return c.Unmodelled("-LocalPort " + p + " (a port keyword or a value that is not a port)")
		}
		if r.Protocol == "Any" {
			return c.Unmodelled("-LocalPort " + p + " with -Protocol Any (Windows refuses a port filter without TCP or UDP)")
		}
	}
	return nil
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 65535 && strconv.Itoa(n) == s
}

// firewallPortFilter is Get-NetFirewallPortFilter on rules piped from
// Get-NetFirewallRule (-AssociatedNetFirewallRule) or on every rule (-All).
func firewallPortFilter() *Cmdlet {
	return &Cmdlet{Name: "Get-NetFirewallPortFilter", Class: "Get-NetFirewallPortFilter",
		Source: netsec + "get-netfirewallportfilter", Behaviour: "the port filter of each rule piped in (-AssociatedNetFirewallRule) or of every rule (-All): Protocol (Any, TCP, UDP), LocalPort (Any or the rule's ports), RemotePort Any",
		Params: []*Param{P("All", "SwitchParameter", -1),
			P("AssociatedNetFirewallRule", "Microsoft.Management.Infrastructure.CimInstance", -1, Pipeline),
			P("Protocol", "System.String[]", -1, Unmodelled), P("LocalPort", "System.String[]", -1, Unmodelled),
			P("PolicyStore", "System.String", -1, Unmodelled), P("CimSession", "Microsoft.Management.Infrastructure.CimSession[]", -1, Alias("Session"), Unmodelled),
			P("AsJob", "SwitchParameter", -1, Unmodelled)},
		Run: func(c *Call) error {
			rules := ps(c).h.firewall()
			if c.Switch("All") || (!c.HasInput && !c.Has("AssociatedNetFirewallRule")) {
				// -All, or no rule given (the cmdlet's default set, All):
				// every rule's filter.
				for _, r := range rules {
					c.Write(portFilterObject(r))
				}
				return nil
			}
			in := c.Input
			if c.Has("AssociatedNetFirewallRule") {
				in = itemsOf(c.Value("AssociatedNetFirewallRule"))
			}
			for _, v := range in {
				o, ok := v.(*pwsh.Object)
				if !ok || !strings.HasSuffix(o.TypeName, "/MSFT_NetFirewallRule") {
					return c.Unmodelled("Get-NetFirewallPortFilter on anything but a rule from Get-NetFirewallRule")
				}
				n, _ := o.Get("Name")
				name := Text(n)
				for _, r := range rules {
					if strings.EqualFold(r.Name, name) {
						c.Write(portFilterObject(r))
					}
				}
			}
			return nil
		}}
}

func firewallNew() *Cmdlet {
	gen := "Microsoft.PowerShell.Cmdletization.GeneratedTypes.NetSecurity."
	return &Cmdlet{Name: "New-NetFirewallRule", Class: "New-NetFirewallRule", ShouldProcess: true,
		Source: netsec + "new-netfirewallrule", Behaviour: "stores the rule (firewall.json) with its -Description, -Group, -Protocol (Any by default; TCP, UDP), -LocalPort (numbers, ranges, Any; only with TCP or UDP, else refused: Windows rejects a port with protocol Any), -Profile (Any by default; Domain, Private, Public, a list) and -RemoteAddress (Any by default; LocalSubnet, an address, a subnet by bit count or mask, a range a-b, a list), which the host's inbound filtering enforces (HostConfig.Firewall); -Profile NotApplicable and the other address keywords refused; an existing -Name is an error",
		Params: []*Param{P("DisplayName", "System.String", -1, Mandatory), P("Name", "System.String", -1, Alias("ID")),
			P("Direction", gen+"Direction", -1, Enum("Inbound", "Outbound")), P("Action", gen+"Action", -1, Enum("NotConfigured", "Allow", "Block")),
			P("Protocol", "System.String", -1), P("LocalPort", "System.String[]", -1), P("RemotePort", "System.String[]", -1, Unmodelled),
			P("Enabled", gen+"Enabled", -1, Enum("True", "False")), P("Profile", gen+"Profile", -1, FlagsEnum("Any", "Domain", "Private", "Public", "NotApplicable")),
			P("Description", "System.String", -1), P("Group", "System.String", -1), P("Program", "System.String", -1, Unmodelled),
			P("LocalAddress", "System.String[]", -1, Unmodelled), P("RemoteAddress", "System.String[]", -1),
			P("PolicyStore", "System.String", -1, Unmodelled), P("CimSession", "Microsoft.Management.Infrastructure.CimSession[]", -1, Alias("Session"), Unmodelled),
			P("AsJob", "SwitchParameter", -1, Unmodelled)},
		Run: func(c *Call) error {
			h := ps(c).h
			h.fwMu.Lock()
			defer h.fwMu.Unlock()
			rules := h.firewall()
			r := FirewallRule{Name: c.Str("Name"), DisplayName: c.Str("DisplayName"), Direction: c.Str("Direction"), Action: c.Str("Action"),
				Protocol: c.Str("Protocol"), LocalPort: c.Strs("LocalPort"), Enabled: c.Str("Enabled"),
				Profile: c.Str("Profile"), RemoteAddress: c.Strs("RemoteAddress"), Description: c.Str("Description"), Group: c.Str("Group")}
			if err := checkPortFilter(c, &r); err != nil {
				return err
			}
			// -Profile: "The default value is Any"; -RemoteAddress: "The
			// default value is Any" (New-NetFirewallRule, learn.microsoft.com).
			if r.Profile == "" {
				r.Profile = "Any"
			}
			if strings.Contains(r.Profile, "NotApplicable") {
				return c.Unmodelled("-Profile NotApplicable")
			}
			if len(r.RemoteAddress) == 0 {
				r.RemoteAddress = []string{"Any"}
			}
			for _, a := range r.RemoteAddress {
				if why := remoteAddrUnmodelled(a); why != "" {
					return c.Unmodelled(why)
				}
				if strings.EqualFold(a, "Any") && len(r.RemoteAddress) > 1 {
					// "*" (Any) "must be the only token included"
					// (INetFwRule::put_RemoteAddresses); what the cmdlet
					// answers to a list with Any is not modelled.
					return c.Unmodelled("-RemoteAddress Any in a list")
				}
			}
			if r.Name == "" {
				r.Name = fmt.Sprintf("{%08x-0000-0000-0000-000000000000}", len(rules)+1)
			}
			if r.Direction == "" {
				r.Direction = "Inbound"
			}
			if r.Action == "" {
				r.Action = "Allow"
			}
			if r.Enabled == "" {
				r.Enabled = "True"
			}
			for _, e := range rules {
				if strings.EqualFold(e.Name, r.Name) {
					return c.Error(c.Fail("Cannot create a file when that file already exists.", "ResourceExists", "MSFT_NetFirewallRule", "CimException",
						"Windows System Error 183", "Microsoft.Management.Infrastructure.CimException"))
				}
			}
			rules = append(rules, r)
			b, _ := json.MarshalIndent(rules, "", "  ")
			if err := os.WriteFile(filepath.Join(h.cfg.Dir, "firewall.json"), b, 0o644); err != nil {
				return c.Throw(c.Fail(err.Error(), "WriteError", r.Name, "IOException", "FirewallStore", "System.IO.IOException"))
			}
			c.Write(ruleObject(r))
			// A listener waiting for its port to be opened serves now:
			// Windows applies a new rule at once.
			if err := h.openHTTPS(); err != nil {
				return c.Throw(c.Fail(err.Error(), "NotSpecified", r.Name, "IOException", "FirewallStore", "System.IO.IOException"))
			}
			return nil
		}}
}

// hostCommands is every cmdlet the simulated host runs: the engine's own and
// the host's.
// (Filled in init: the cmdlets call back into the host's command runner.)
var hostCommands *pwsh.Registry

func init() {
	hostCommands = pwsh.NewRegistry(append(pwsh.BuiltinCmdlets(), guardCmdlets(hostCmdlets())...)...)
}

// hostCmdlets are the host's own cmdlets as declared, before guardCmdlets
// wraps them (TestEveryParameterUsedOrRefused reads their Run functions).
func hostCmdlets() []*Cmdlet {
	host := append(append(append(append(append(append(fileCmdlets(), serviceCmdlets()...), registryCmdlets()...), systemCmdlets()...), pathCmdlets()...),
		certCmdlets()...), wsmanCmdlets()...)
	return append(append(append(append(host, aclCmdlets()...), hnsCmdlets()...), timeZoneCmdlets()...), hotfixCmdlets()...)
}

// Commands lists the modelled cmdlets (for the package documentation).
func Commands() []*Cmdlet { return hostCommands.All() }
