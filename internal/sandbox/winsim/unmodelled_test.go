package winsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestUnmodelledRefused shows, through an outside WinRM client as Terraform
// and the provider reach the host, that one real thing of each kind the
// simulated host does not model is refused (with the Windows error where
// Windows has one for it, else SimulatorNotModelled), never answered as if
// it had run: the walk test (TestProviderScriptsModelled) shows the
// provider's scripts use none of them.
func TestUnmodelledRefused(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	endpoint := winrm.NewEndpoint("127.0.0.1", f.Host.Ports().WinRMHTTPS, true, false, f.CA.CertPEM, nil, nil, 30*time.Second)
	params := *winrm.DefaultParameters
	params.TransportDecorator = func() winrm.Transporter { return &winrm.ClientNTLM{} }
	client, err := winrm.NewClientWithParameters(endpoint, "Administrator", f.Password, &params)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind, script   string
		code           int
		stdout, stderr string
		source         string
	}{
		{"cmdlet", "Get-ChildItem -Path 'C:\\'", 1, "", "The term 'Get-ChildItem' is not recognized", mgmt + "get-childitem?view=powershell-5.1 (real; the host answers as for an unknown command)"},
		{"parameter-of-modelled-cmdlet", "Remove-Item -Path 'C:\\x.txt' -Filter '*.txt'", 1, "", "SimulatorNotModelled", mgmt + "remove-item?view=powershell-5.1 (-Filter)"},
		{"common-parameter", "Get-Service -Name 'WinRM' -OutVariable got", 1, "", "SimulatorNotModelled", about + "about_commonparameters?view=powershell-5.1 (-OutVariable)"},
		{"static-property", "[Environment]::UserDomainName", 1, "", "does not model the static property [System.Environment]::UserDomainName", "https://learn.microsoft.com/en-us/dotnet/api/system.environment.userdomainname"},
		{"static-method", "[IO.Path]::GetTempFileName()", 1, "", "SimulatorNotModelled", "https://learn.microsoft.com/en-us/dotnet/api/system.io.path.gettempfilename"},
		{"instance-property", "[Environment]::OSVersion.Version.MajorRevision", 1, "", "does not model the property [System.Version].MajorRevision", "https://learn.microsoft.com/en-us/dotnet/api/system.version.majorrevision"},
		{"instance-method", "(1).CompareTo(2)", 1, "", "does not model the method [System.Int32].CompareTo()", "https://learn.microsoft.com/en-us/dotnet/api/system.int32.compareto"},
		{"automatic-variable", "$MyInvocation.MyCommand", 1, "", "SimulatorNotModelled", about + "about_automatic_variables?view=powershell-5.1#myinvocation"},
		{"program", "whoami.exe\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "winsim: the simulated host has no implementation of whoami.exe", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/whoami"},
		// cmd.exe's internal commands it does not model are refused by
		// name, exit 1 (doc.go, "Command lines"; cmd_builtins.go), not
		// answered as unknown names: Windows runs them.
		{"cmd-builtin-ver", "cmd /c \"ver\"\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "the simulated host does not model the internal command 'ver'", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/ver"},
		{"cmd-builtin-set", "cmd /c \"set X=1\"\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "does not model the internal command 'set'", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/set_1"},
		{"cmd-builtin-if", "cmd /c \"if exist C:\\k echo yes\"\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "does not model the internal command 'if'", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/if"},
		{"cmd-builtin-for", "cmd /c \"for %i in (a) do echo %i\"\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "does not model the internal command 'for'", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/for"},
		{"cmd-builtin-copy", "cmd /c \"copy C:\\a.txt C:\\b.txt\"\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "does not model the internal command 'copy'", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/copy"},
		{"cmd-builtin-rmdir", "cmd /c \"rmdir /s /q C:\\k\"\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "does not model the internal command 'rmdir'", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/rmdir"},
		{"cmd-builtin-dir-switch", "cmd /c \"dir/b C:\\\"\n\"exit=$LASTEXITCODE\"", 0, "exit=1", "does not model the internal command 'dir'", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/dir"},
		{"cmd-unknown-name-still-9009", "cmd /c \"nosuchprogram\"\n\"exit=$LASTEXITCODE\"", 0, "exit=9009", "'nosuchprogram' is not recognized as an internal or external command", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmd (control: an unknown name is still 9009)"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			stdout, stderr, code, err := client.RunPSWithContext(ctx, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			stderr = decodeCLIXML(stderr)
			t.Logf("exit %d stdout %q stderr %q", code, stdout, stderr)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("want exit %d, stdout containing %q, stderr containing %q (source: %s)", tc.code, tc.stdout, tc.stderr, tc.source)
			}
		})
	}
}
