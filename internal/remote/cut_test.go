package remote_test

import (
	"errors"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestRunConnectionCut: a host that restarts while a command's reply is
// on its way (winsim's Faults.RebootMidReply) gives ErrConnectionCut, not
// a result: not an exit code of 0 with half the output, nor an exit code
// of the WinRM library's own (16001 for an EOF). After the restart the
// host answers again.
func TestRunConnectionCut(t *testing.T) {
	f := startHost(t, func(c *winsim.HostConfig) {
		c.Faults.RebootMidReply = &winsim.StepFault{Step: "join-files", Times: 1}
	})
	for _, v := range []variant{httpNTLM, httpsBasic} { // WinRM: the reboot fault cuts WinRM replies
		t.Run(v.name, func(t *testing.T) {
			ctx := testCtx(t)
			f.Host.SetFaults(winsim.Faults{RebootMidReply: &winsim.StepFault{Step: "join-files", Times: 1}})
			tr := connect(t, v.config(f))
			res, err := tr.Run(ctx, "# step: join-files\nWrite-Output 'node files written'")
			if !errors.Is(err, remote.ErrConnectionCut) {
				t.Fatalf("a reply cut by a restart: %+v, %v; want ErrConnectionCut", res, err)
			}
			if err := f.Host.WaitUp(ctx); err != nil {
				t.Fatal(err)
			}
			tr = connect(t, v.config(f))
			if res, err := tr.Run(ctx, "# step: join-files\nWrite-Output 'node files written'"); err != nil || res.Stdout == "" {
				t.Errorf("after the restart: %+v, %v", res, err)
			}
		})
	}
}
