package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestConnectDropped: a guest whose firewall drops the runner's connection
// attempts (a stock guest's WinRM HTTP rule admits only its local subnet on
// a Public network; no rule admits SSH) answers nothing. Each attempt waits
// the dial timeout, Connect keeps trying until its context ends and no
// longer, and its error names the timeout, the attempts and the likely
// causes, with the vmtools transport as the way around.
func TestConnectDropped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the simulator drops connections on Linux only")
	}
	f := startHost(t, func(c *winsim.HostConfig) {
		c.Firewall = &winsim.Firewall{Profile: "Public", ClientsOutsideSubnet: true}
		b, err := json.Marshal(winsim.StockFirewallRules())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.Dir, "firewall.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	const dial, bound = 400 * time.Millisecond, 2 * time.Second
	for _, tc := range []struct {
		v    variant
		want []string
	}{
		{httpNTLM, []string{"winrm http 127.0.0.1:", "i/o timeout", "no answer within the dial timeout of 400ms", "dropped, not refused",
			"admits WinRM over HTTP from its local subnet only", `transport type = "vmtools"`}},
		{sshPassword, []string{"ssh 127.0.0.1:", "i/o timeout", "no answer within the dial timeout of 400ms", "dropped, not refused", `transport type = "vmtools"`}},
	} {
		t.Run(tc.v.name, func(t *testing.T) {
			cfg := tc.v.config(f)
			cfg.DialTimeout = dial
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			start := time.Now()
			_, err := remote.Connect(ctx, cfg)
			took := time.Since(start)
			t.Logf("after %v: %v", took, err)
			var ce *remote.ConnectError
			if !errors.As(err, &ce) || ce.Step != remote.StepDial || ce.Attempts < 2 {
				t.Fatalf("err = %v, want a dial ConnectError after several attempts", err)
			}
			if took < bound || took > bound+dial+time.Second {
				t.Errorf("Connect returned after %v, want its bound of %v (the last attempt cut short)", took, bound)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if tc.v.proto == remote.ProtocolSSH && strings.Contains(err.Error(), "WinRM over HTTP") {
				t.Errorf("an SSH error blames WinRM's firewall rule:\n%v", err)
			}
		})
	}
}
