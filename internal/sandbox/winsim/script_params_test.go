package winsim

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestScriptFileParams: a script file's param() block binds -Name value
// pairs, converts them to the parameter's type, fills the defaults of the
// rest, and refuses a name it does not declare or a string for a [bool]
// (about_Scripts; Antrea's Install-OVS.ps1 is invoked this way).
func TestScriptFileParams(t *testing.T) {
	h := startTestHost(t, nil)
	if err := h.fs.MkdirAll(`C:\x`); err != nil {
		t.Fatal(err)
	}
	script := "Param(\r\n    [parameter(Mandatory = $false)] [string] $OVSInstallDir = \"C:\\openvswitch\",\r\n" +
		"    [parameter(Mandatory = $false)] [string] $LocalFile,\r\n    [parameter(Mandatory = $false)] [bool] $InstallUserspace = $true\r\n)\r\n" +
		"Write-Output \"dir=$OVSInstallDir lf=$LocalFile us=$InstallUserspace\"\r\n"
	if err := h.WriteFile(`C:\x\s.ps1`, []byte(script)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ call, want string }{
		{"& 'C:/x/s.ps1' -LocalFile 'C:/a/openvswitch' -InstallUserspace $false", `dir=C:\openvswitch lf=C:/a/openvswitch us=False`},
		{"& 'C:/x/s.ps1' -localfile x", `dir=C:\openvswitch lf=x us=True`},
		{"& 'C:/x/s.ps1' 'D:\\ovs' y", `dir=D:\ovs lf=y us=True`},
		{"$s = 'C:/x/s.ps1'; & $s -LocalFile z", `dir=C:\openvswitch lf=z us=True`},
		{"& 'C:/x/s.ps1' -Nope 1", "A parameter cannot be found that matches parameter name 'Nope'."},
		{"& 'C:/x/s.ps1' -InstallUserspace 'false'", "Boolean parameters accept only Boolean values"},
	} {
		var out syncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		h.Run(ctx, &Process{Path: powershellPath, Args: []string{"-NoProfile", "-Command", c.call}, Env: map[string]string{"PATH": defaultPath}, Stdout: &out, Stderr: &out})
		cancel()
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: got %q, want %q", c.call, out.String(), c.want)
		}
	}
}
