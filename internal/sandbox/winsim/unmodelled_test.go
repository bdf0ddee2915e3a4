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
		// cmd.exe answers a builtin it does not model as it answers an
		// unknown name (doc.go, "Command lines"): refused, exit 9009, not
		// run; Windows would print its version.
		{"cmd-builtin", "cmd /c \"ver\"\n\"exit=$LASTEXITCODE\"", 0, "exit=9009", "'ver' is not recognized as an internal or external command", "https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/ver"},
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
