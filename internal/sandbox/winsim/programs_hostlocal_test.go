package winsim

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// host-local as kube-proxy's start script runs it for the source VIP:
// the first free address after the gateway, the same one again for the
// same container, a subnet with host bits refused as range.go refuses it.
func TestHostLocalIPAM(t *testing.T) {
	h := startTestHost(t, nil)
	if err := h.WriteFile(`C:\opt\cni\bin\host-local.exe`, exe("host-local", "v1.9.1")); err != nil {
		t.Fatal(err)
	}
	run := func(id, conf string) (string, int) {
		var out bytes.Buffer
		code := h.Run(context.Background(), &Process{
			Path: `C:\opt\cni\bin\host-local.exe`,
			Env: map[string]string{"CNI_COMMAND": "ADD", "CNI_CONTAINERID": id, "CNI_NETNS": "none",
				"CNI_IFNAME": "none", "CNI_PATH": `C:\opt\cni\bin`},
			Stdin: strings.NewReader(conf), Stdout: &out,
		})
		return out.String(), code
	}
	conf := `{"cniVersion":"0.3.0","name":"flannel.4096","ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.3.0/24"}]],"dataDir":"/var/lib/cni/networks"}}`
	out, code := run("kube-proxy-source-vip", conf)
	if code != 0 || !strings.Contains(out, `"address":"10.244.3.2/24"`) || !strings.Contains(out, `"version":"4"`) {
		t.Fatalf("first ADD: exit %d, %s", code, out)
	}
	if out, _ := run("kube-proxy-source-vip", conf); !strings.Contains(out, `10.244.3.2/24`) {
		t.Errorf("same container again: %s", out)
	}
	if out, _ := run("other", conf); !strings.Contains(out, `10.244.3.3/24`) {
		t.Errorf("second container: %s", out)
	}
	if !h.FileExists(`C:\var\lib\cni\networks\flannel.4096\10.244.3.2`) {
		t.Errorf("no reservation file on the host")
	}
	out, code = run("x", strings.Replace(conf, "10.244.3.0/24", "10.244.3.1/24", 1))
	if code != 1 || !strings.Contains(out, "host bits set") {
		t.Errorf("host bits: exit %d, %s", code, out)
	}
}
