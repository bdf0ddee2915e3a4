package kubeletsim_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Versions in the simulated binaries the golden image would have installed.
const (
	kubeletVersion    = kubeletsimtest.KubeletVersion
	containerdVersion = kubeletsimtest.ContainerdVersion
	// clusterWait bounds each wait on the cluster; they take seconds.
	clusterWait = 60 * time.Second
)

func TestMain(m *testing.M) { sandboxtest.Main(m) }

// cluster is the package's sandbox (a real control plane), started on
// first use.
func cluster(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	return sandboxtest.Shared(t)
}

// node is a simulated Windows host whose kubelet service runs kubeletsim,
// prepared like a machine cloned from our golden image.
type node struct {
	*kubeletsimtest.Node
	name string
	tr   remote.Transport
}

type hostOptions struct {
	faults          winsim.Faults
	containerdDown  bool // containerd installed but not running
	noKubeletBinary bool
	noCNI           bool // no CNI configuration or plugins
	accounts        []winsim.LocalAccount
}

func newNode(t *testing.T, name string, o hostOptions) *node {
	t.Helper()
	n := kubeletsimtest.NewNode(t, name, kubeletsimtest.Options{Checker: cluster(t).KubeletChecker(), Faults: o.faults, ContainerdDown: o.containerdDown, NoKubeletBinary: o.noKubeletBinary, NoCNI: o.noCNI, LocalAccounts: o.accounts})
	return &node{Node: n, name: name, tr: acctest.ConnectNode(t, n)}
}

// run runs a script over WinRM and fails the test when it fails.
func (n *node) run(t *testing.T, script string) remote.Result {
	t.Helper()
	res, err := n.tr.Run(context.Background(), script)
	if err != nil {
		t.Fatalf("running on %s: %v", n.name, err)
	}
	return res
}

// join runs the windows_node join steps over WinRM.
func (n *node) join(t *testing.T, cfg bootstrap.JoinConfig) error {
	t.Helper()
	return n.joinWith(t, cfg, nil)
}

// joinWith runs the join steps, calling beforeKubelet (when not nil) just
// before the step that creates and starts the kubelet service; it may
// return a replacement script for that step.
func (n *node) joinWith(t *testing.T, cfg bootstrap.JoinConfig, beforeKubelet func(script string) string) error {
	t.Helper()
	steps, err := bootstrap.JoinSteps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.Name == "kubelet-service" && beforeKubelet != nil {
			s.Script = beforeKubelet(s.Script)
		}
		if _, err := acctest.RunStep(context.Background(), n.tr, s); err != nil {
			return fmt.Errorf("step %s: %w", s.Name, err)
		}
	}
	return nil
}

func (n *node) kubeletLog() string { return n.KubeletLog() }

// waitForLog waits until kubelet.log contains want.
func (n *node) waitForLog(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(n.kubeletLog(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("kubelet.log of %s never contained %q:\n%s", n.name, want, n.kubeletLog())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// joinConfig is what windows_node discovers and generates for a node.
func joinConfig(s *sandbox.Sandbox, name, token string) bootstrap.JoinConfig {
	return bootstrap.JoinConfig{
		NodeName: name, NodeIP: "127.0.0.1",
		APIServer: s.ControlPlane.Server, ClusterCA: s.CA.CertPEM, BootstrapToken: token,
		ClusterDNS: []string{controlplane.DNSServiceIP}, ClusterDomain: controlplane.DNSDomain,
		ClusterCIDR: controlplane.ClusterCIDR, ServiceCIDR: controlplane.ServiceCIDR,
		KubeletAdmit: []string{"127.0.0.1", controlplane.ClusterCIDR},
		Labels:       map[string]string{"example.com/pool": "web"},
		Taints:       []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		CNI:          "none",
	}
}

const tokenChars = "abcdefghijklmnopqrstuvwxyz0123456789"

func randomString(n int) string {
	b := make([]byte, n)
	for i := range b {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(tokenChars))))
		b[i] = tokenChars[k.Int64()]
	}
	return string(b)
}

// createBootstrapToken creates a bootstrap token the way windows_node does:
// a short-lived Secret in kube-system that authenticates as the kubeadm
// default node-token group.
func createBootstrapToken(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	id, secret := randomString(6), randomString(16)
	_, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": id, "token-secret": secret,
			"description":                    "kubeletsim test",
			"expiration":                     time.Now().Add(15 * time.Minute).UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true",
			"usage-bootstrap-signing":        "true",
			"auth-extra-groups":              controlplane.BootstrapTokenGroup,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return id + "." + secret
}

// waitForNode waits until the Node satisfies cond.
func waitForNode(t *testing.T, cs kubernetes.Interface, name string, what string, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return cs.CoreV1().Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return cs.CoreV1().Nodes().Watch(ctx, o)
		},
	}
	ev, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, nil, func(e watch.Event) (bool, error) {
		n, ok := e.Object.(*corev1.Node)
		return ok && e.Type != watch.Deleted && cond(n), nil
	})
	if err != nil {
		t.Fatalf("waiting for node %s to be %s: %v", name, what, err)
	}
	return ev.Object.(*corev1.Node)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// expectNoNode checks that no Node of that name exists.
func expectNoNode(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("node %s: err = %v, want NotFound", name, err)
	}
}
