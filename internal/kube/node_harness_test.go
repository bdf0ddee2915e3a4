package kube_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// The tests in package kube_test run against the sandbox's real control
// plane, started on first use; the package's unit tests never start it.

const (
	// clusterWait bounds each wait on the cluster; they take seconds.
	clusterWait = 60 * time.Second
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// cluster starts the package's sandbox on first use and returns an admin
// client of its cluster.
func cluster(t *testing.T) (*sandbox.Sandbox, *kube.Client) {
	t.Helper()
	sb := sandboxtest.Shared(t)
	c, err := kube.NewClient(t.Context(), kube.Config{ConfigPaths: []string{sb.Kubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	return sb, c
}

// winHost is a simulated Windows host prepared like a clone of our golden
// image, whose kubelet service runs kubeletsim.
type winHost struct {
	*kubeletsimtest.Node
	name string
	tr   remote.Transport
}

func newHost(t *testing.T, name string, faults winsim.Faults) *winHost {
	// The join steps run native programs (sc.exe, kube-log-runner).
	t.Helper()
	n := kubeletsimtest.NewNode(t, name, kubeletsimtest.Options{Checker: sandboxtest.Shared(t).KubeletChecker(), Faults: faults})
	return &winHost{Node: n, name: name, tr: acctest.ConnectNode(t, n)}
}

func (h *winHost) run(t *testing.T, script string) {
	t.Helper()
	if _, err := h.tr.Run(t.Context(), script); err != nil {
		t.Fatalf("running on %s: %v", h.name, err)
	}
}

// join runs windows_node's join steps with the token over WinRM.
func (h *winHost) join(t *testing.T, s *sandbox.Sandbox, token string, labels map[string]string) {
	t.Helper()
	steps, err := bootstrap.JoinSteps(bootstrap.JoinConfig{
		NodeName: h.name, NodeIP: "127.0.0.1",
		APIServer: s.ControlPlane.Server, ClusterCA: s.CA.CertPEM, BootstrapToken: token,
		ClusterDNS: []string{controlplane.DNSServiceIP}, ClusterDomain: controlplane.DNSDomain,
		ClusterCIDR: controlplane.ClusterCIDR, ServiceCIDR: controlplane.ServiceCIDR,
		KubeletAdmit: []string{"127.0.0.1", controlplane.ClusterCIDR},
		Labels:       labels, Taints: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}, CNI: "none",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if _, err := acctest.RunStep(t.Context(), h.tr, st); err != nil {
			t.Fatalf("join step %s on %s: %v\nkubelet.log:\n%s", st.Name, h.name, err, h.kubeletLog())
		}
	}
}

func (h *winHost) kubeletLog() string { return h.KubeletLog() }

// joinNode brings up a host, joins it with a fresh bootstrap token the way
// windows_node does, and waits until its Node is Ready. The Node is deleted
// when the test ends.
func joinNode(t *testing.T, s *sandbox.Sandbox, c *kube.Client, name string, labels map[string]string) *winHost {
	t.Helper()
	h := newHost(t, name, noFaults)
	token, id, err := c.CreateBootstrapToken(t.Context(), 10*time.Minute, "kube test "+name)
	if err != nil {
		t.Fatal(err)
	}
	h.join(t, s, token, labels)
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	if _, err := c.WaitForNodeReady(ctx, name); err != nil {
		t.Fatalf("%v\nkubelet.log:\n%s", err, h.kubeletLog())
	}
	if err := c.DeleteBootstrapToken(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	// The node lifecycle controller lifts the not-ready taint up to its
	// monitor period (5 s) after Ready; the tests want a schedulable Node.
	waitForNode(t, c, name, "free of the not-ready taint", func(n *corev1.Node) bool {
		return !slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == corev1.TaintNodeNotReady })
	})
	t.Cleanup(func() {
		// Stop the kubelet first, or it would keep the Node's Lease alive.
		_, _ = h.tr.Run(context.WithoutCancel(t.Context()), "Stop-Service -Name 'kubelet'")
		_ = c.DeleteNode(context.WithoutCancel(t.Context()), name)
	})
	return h
}

// waitForNode watches the Node until cond holds.
func waitForNode(t *testing.T, c *kube.Client, name, what string, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	ev, err := watchtools.UntilWithSync(ctx, &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.CoreV1().Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.CoreV1().Nodes().Watch(ctx, o)
		},
	}, &corev1.Node{}, nil, func(e watch.Event) (bool, error) {
		n, ok := e.Object.(*corev1.Node)
		return ok && e.Type != watch.Deleted && cond(n), nil
	})
	if err != nil {
		t.Fatalf("waiting for Node %s to be %s: %v", name, what, err)
	}
	return ev.Object.(*corev1.Node)
}

var (
	noFaults   = winsim.Faults{}
	neverReady = winsim.Faults{KubeletNeverReady: true}
)
