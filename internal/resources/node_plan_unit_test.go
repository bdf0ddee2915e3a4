package resources

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
	"github.com/wincluster/terraform-provider-windows/internal/winnode"
)

// The three answers of a CPU or memory change: a power cycle with its
// reason, none when hot-add applies it (which the sandbox's templates,
// without hot-add, never show), and "may" when the VM could not be read.
func TestHardwareWarning(t *testing.T) {
	changes := []string{"num_cpus 2 -> 4"}
	running := &vsphere.VMInfo{PowerState: vsphere.PoweredOn, NumCPUs: 2, MemoryMB: 4096, CPUHotAdd: true}
	hotAdd := vsphere.PowerCycleReason(running, vsphere.Hardware{NumCPUs: 4})
	cases := []struct {
		name, reason  string
		known         bool
		summary, want string
		not           string
	}{
		{"hot-add", hotAdd, true, "Windows node win-0: CPU and memory change while the node runs", "no drain, no restart and no power cycle", "PodDisruptionBudgets"},
		{"power cycle", vsphere.PowerCycleReason(running, vsphere.Hardware{NumCPUs: 1}), true,
			"Windows node win-0 will be drained and power-cycled", "removing CPUs (2 to 1) needs CPU hot-remove, which is off", ""},
		{"unknown", "", false, "Windows node win-0 may be drained and power-cycled", "decided at apply", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			summary, detail := hardwareWarning("win-0", changes, c.reason, c.known, drainDescription(kube.DrainOptions{Timeout: 10 * time.Minute}))
			if summary != c.summary || !strings.Contains(detail, c.want) || !strings.HasPrefix(detail, changes[0]) {
				t.Errorf("hardwareWarning = %q, %q; want %q with %q", summary, detail, c.summary, c.want)
			}
			if c.not != "" && strings.Contains(detail, c.not) {
				t.Errorf("detail %q mentions %q", detail, c.not)
			}
			if c.known && c.reason != "" && !strings.Contains(detail, "gives up after 10m (drain.timeout)") {
				t.Errorf("a power cycle's warning lacks the drain: %q", detail)
			}
		})
	}
}

func TestDrainDescription(t *testing.T) {
	strict := drainDescription(kube.DrainOptions{Timeout: 90 * time.Minute})
	loose := drainDescription(kube.DrainOptions{Timeout: 30 * time.Second, IgnoreDaemonSets: true, DeleteEmptyDirData: true, Force: true})
	for text, fragments := range map[string][]string{
		strict: {"gives up after 1h30m (drain.timeout)", "DaemonSet pods stop the drain", "emptyDir volumes stop the drain", "no controller manages stop the drain"},
		loose:  {"gives up after 30s", "DaemonSet pods stay", "that data is lost", "deleted and not recreated", "PodDisruptionBudgets are honoured"},
	} {
		for _, f := range fragments {
			if !strings.Contains(text, f) {
				t.Errorf("%q lacks %q", text, f)
			}
		}
	}
}

// The plan names each CPU and memory change with the state's value and the
// planned one, or "(known after apply)"; the disk has its own warning.
func TestHardwareChanges(t *testing.T) {
	current := winnode.Sizing{NumCPUs: winnode.Size{Value: 2}, MemoryMB: winnode.Size{Value: 4096}, DiskSizeGB: winnode.Size{Value: 40}}
	desired := winnode.Sizing{NumCPUs: winnode.Size{Value: 4}, MemoryMB: winnode.Size{Unknown: true}, DiskSizeGB: winnode.Size{Value: 60}}
	got := hardwareChanges(winnode.PlanHardware(current, desired))
	want := []string{"num_cpus 2 -> 4", "memory_mb 4096 -> (known after apply)"}
	if !slices.Equal(got, want) {
		t.Errorf("hardwareChanges = %q, want %q", got, want)
	}
}
