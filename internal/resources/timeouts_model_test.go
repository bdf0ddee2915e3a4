package resources

import (
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// The guest side of a create at the latency model's tail (the 99th
// percentile of each operation, at real scale; internal/sandbox/latency
// keeps each figure with its source). A sum of tails is the pessimistic
// bound: every operation slow at once.
var (
	// agnhostBytes is the probe image's compressed size as the sandbox
	// serves it (kubeletsim's servedImageBytes: an estimate).
	agnhostBytes int64 = 150e6
	// imageBuildDownloadBytes is what an image build downloads: the node
	// binaries (kubelet ~120 MB, kube-proxy ~60 MB, containerd ~100 MB,
	// CNI plugins) and one cumulative update (~340 MB for Windows Server
	// 2022, hashicorp/packer#13102); estimate, rounded up to 1 GB.
	imageBuildDownloadBytes int64 = 1e9
)

func tailOf(ops ...latency.Op) time.Duration {
	m := latency.New(1, latency.Tail)
	var d time.Duration
	for _, op := range ops {
		d += m.Real(op)
	}
	return d
}

// TestDefaultTimeoutsAboveTheModelsTail: every create's default timeout
// lies above the tail of what it waits for at real scale, so a slow but
// healthy Windows never times a create out (issue 35).
func TestDefaultTimeoutsAboveTheModelsTail(t *testing.T) {
	m := latency.New(1, latency.Tail)
	// A node: the clone, the customized first boot (6-15 minutes), the
	// containerd and kubelet services, the kubelet's registration and a
	// status sync to Ready, the agents' Ready at the next sync, the network
	// probe's first pull of agnhost; with reboot_after_join the restart,
	// a registration and a sync again.
	node := tailOf(latency.CloneFull, latency.FirstBootCustomized, latency.ServiceStart, latency.ServiceStart,
		latency.KubeletRegister, latency.KubeletStatusUpdate, latency.KubeletStatusUpdate) +
		m.Move(latency.ImagePull, agnhostBytes) +
		tailOf(latency.WindowsRestart, latency.KubeletRegister, latency.KubeletStatusUpdate)
	// An image: the build VM's clone and boot, the downloads, the
	// Containers feature's restart, one cumulative update's install and
	// the restart that completes it, sysprep's generalize.
	image := tailOf(latency.CloneFull, latency.WindowsBoot, latency.WindowsRestart, latency.UpdateInstall,
		latency.UpdateRestart, latency.SysprepGeneralize) + m.Move(latency.DownloadLink, imageBuildDownloadBytes)
	for _, c := range []struct {
		what          string
		timeout, tail time.Duration
	}{
		// Twenty nodes at -parallelism=20 from one template on one host:
		// 4 full clones at once, the last node queued behind 4 waves.
		{"windows_node create", nodeCreateTimeout, node + m.NodesPath(20, 3, 1, nil).Queue},
		// A pool's members join max_parallel (10 by default) at a time: one
		// member's tail plus the clones queued ahead of the tenth on its
		// template's host.
		{"windows_node_pool create", poolCreateTimeout, node + m.NodesPath(poolDefaultMaxParallel, 3, 1, nil).Queue},
		{"windows_golden_image create", goldenImageCreateTimeout, image},
	} {
		if c.timeout <= c.tail {
			t.Errorf("%s: default timeout %s, not above the model's tail %s", c.what, c.timeout, c.tail)
		}
		t.Logf("%s: default %s, tail %s", c.what, c.timeout, c.tail.Round(time.Second))
	}
}
