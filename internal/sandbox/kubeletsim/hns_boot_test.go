package kubeletsim_test

import (
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

// TestHNSLostOnReboot: with the fault, the HNS networks of an earlier boot
// are gone at the kubelet's first start in a new boot, and a restart in the
// same boot keeps what this boot created; without it they stay on disk.
func TestHNSLostOnReboot(t *testing.T) {
	h := winsimtest.StartHost(t, nil).Host
	if h.BootID() == "" {
		t.Fatal("the first boot has no boot ID")
	}
	has := func() bool {
		b, err := h.ReadFile(kubeletsim.HNSStateFile)
		return err == nil && strings.Contains(string(b), "flannel.4096")
	}
	if err := kubeletsim.PutHNSNetwork(h, "flannel.4096", "10.244.1.0/24", 4096); err != nil {
		t.Fatal(err)
	}
	if err := kubeletsim.ForgetHNSAfterBoot(h); err != nil || !has() {
		t.Fatalf("without the fault the network is lost (%v)", err)
	}
	h.Reboot()
	if err := kubeletsim.ForgetHNSAfterBoot(h); err != nil || !has() {
		t.Fatalf("without the fault a reboot loses the network (%v)", err)
	}

	h.SetFaults(winsim.Faults{HNSLostOnReboot: true})
	if err := kubeletsim.ForgetHNSAfterBoot(h); err != nil || !has() {
		t.Fatalf("a kubelet restart in the same boot loses the network (%v)", err)
	}
	before := h.BootID()
	h.Reboot()
	if h.BootID() == before || h.BootID() == "" {
		t.Fatalf("boot IDs %q then %q", before, h.BootID())
	}
	if err := kubeletsim.ForgetHNSAfterBoot(h); err != nil || has() {
		t.Fatalf("the network outlived the reboot (%v)", err)
	}
}
