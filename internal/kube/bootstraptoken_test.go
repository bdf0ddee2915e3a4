package kube_test

import (
	"context"
	"errors"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
)

// TestBootstrapTokenJoin creates a bootstrap token, joins a simulated
// Windows host with it through the real TLS bootstrap (CSR approved and
// signed by the controller manager), waits for the Node to be Ready and to
// get its pod CIDR, deletes the token and then the Node.
func TestBootstrapTokenJoin(t *testing.T) {
	s, c := cluster(t)
	ctx := t.Context()
	const name = "win-token"

	token, id, err := c.CreateBootstrapToken(ctx, 10*time.Minute, "windows_node "+name)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`).MatchString(token) || !strings.HasPrefix(token, id+".") {
		t.Fatalf("token %q, id %q: not <id>.<secret>", token, id)
	}
	t.Run("secret", func(t *testing.T) {
		sec, err := c.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sec.Type != "bootstrap.kubernetes.io/token" {
			t.Errorf("type %s", sec.Type)
		}
		want := map[string]string{
			"token-id": id, "token-secret": token[7:], "description": "windows_node " + name,
			"usage-bootstrap-authentication": "true",
			"auth-extra-groups":              "system:bootstrappers:kubeadm:default-node-token",
		}
		for k, v := range want {
			if got := string(sec.Data[k]); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		// The kubelet's TLS bootstrap below authenticates with the token;
		// nothing signs with it.
		if v, ok := sec.Data["usage-bootstrap-signing"]; ok {
			t.Errorf("usage-bootstrap-signing = %q, want none", v)
		}
		if sec.Labels[kube.LabelManagedBy] != kube.FieldManager {
			t.Errorf("labels %v, want %s=%s", sec.Labels, kube.LabelManagedBy, kube.FieldManager)
		}
		exp, err := time.Parse(time.RFC3339, string(sec.Data["expiration"]))
		if err != nil {
			t.Fatalf("expiration: %v", err)
		}
		if d := time.Until(exp); d < 9*time.Minute || d > 10*time.Minute {
			t.Errorf("expiration %s is %s away, want about 10m", exp, d)
		}
	})

	h := newHost(t, name, noFaults)
	start := time.Now()
	h.join(t, s, token, map[string]string{"example.com/pool": "token"})
	joined := time.Since(start)
	wctx, cancel := context.WithTimeout(ctx, clusterWait)
	defer cancel()
	node, err := c.WaitForNodeReady(wctx, name)
	if err != nil {
		t.Fatalf("%v\nkubelet.log:\n%s", err, h.kubeletLog())
	}
	t.Logf("join steps %s, Ready %s after the start", joined.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if !kube.NodeIsReady(node) || node.Labels["example.com/pool"] != "token" {
		t.Errorf("WaitForNodeReady returned %s: ready %v, labels %v", node.Name, kube.NodeIsReady(node), node.Labels)
	}

	// What windows_node does next, while the node lifecycle controller may
	// not yet have lifted its not-ready taint: the two must not undo each
	// other.
	if _, err := c.ApplyNodeSettings(ctx, name, kube.NodeSettings{
		ProviderID: "vsphere://4210f7c2-5d2e-6c35-bd31-2a6f0c1e9a11",
		Taints:     []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
	}); err != nil {
		t.Fatal(err)
	}
	node = waitForNode(t, c, name, "free of the not-ready taint", func(n *corev1.Node) bool {
		return !slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool { return tn.Key == corev1.TaintNodeNotReady })
	})
	expectTaints(t, node, "os=windows:NoSchedule")

	cidr, err := c.WaitForNodePodCIDR(wctx, name)
	if err != nil {
		t.Fatal(err)
	}
	_, clusterNet, _ := net.ParseCIDR(controlplane.ClusterCIDR)
	if ip, _, err := net.ParseCIDR(cidr); err != nil || !clusterNet.Contains(ip) {
		t.Errorf("pod CIDR %q is not in the cluster CIDR %s", cidr, controlplane.ClusterCIDR)
	}

	if n, err := c.FindNode(ctx, name); err != nil || n.Spec.PodCIDR != cidr {
		t.Errorf("FindNode: %v, %v", n, err)
	}

	t.Run("delete token", func(t *testing.T) {
		if err := c.DeleteBootstrapToken(ctx, id); err != nil {
			t.Fatal(err)
		}
		_, err := c.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("token Secret after delete: %v", err)
		}
		if err := c.DeleteBootstrapToken(ctx, id); err != nil {
			t.Errorf("deleting it again: %v", err)
		}
		if err := c.DeleteBootstrapToken(ctx, "../etc"); err == nil {
			t.Error("a malformed id was accepted")
		}
	})

	t.Run("delete node", func(t *testing.T) {
		h.run(t, "Stop-Service -Name 'kubelet'")
		if err := c.DeleteNode(ctx, name); err != nil {
			t.Fatal(err)
		}
		_, err := c.FindNode(ctx, name)
		var nf *kube.NotFoundError
		if !errors.As(err, &nf) || nf.Kind != "Node" || nf.Name != name {
			t.Fatalf("FindNode after delete: %v, want a NotFoundError", err)
		}
		if err := c.DeleteNode(ctx, name); err != nil {
			t.Errorf("deleting it again: %v", err)
		}
	})
}

// TestWaitForNodeTimeouts checks the errors of waits that run out of time.
func TestWaitForNodeTimeouts(t *testing.T) {
	s, c := cluster(t)

	t.Run("never registered", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		_, err := c.WaitForNodeReady(ctx, "win-absent")
		var we *kube.NodeWaitError
		if !errors.As(err, &we) || we.Registered || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want an unregistered NodeWaitError wrapping the deadline", err)
		}
		if !strings.Contains(err.Error(), `Node "win-absent" never registered`) {
			t.Errorf("message: %v", err)
		}
		_, err = c.WaitForNodePodCIDR(ctx, "win-absent")
		if !errors.As(err, &we) || we.Registered {
			t.Errorf("pod CIDR wait: %v", err)
		}
	})

	t.Run("never Ready", func(t *testing.T) {
		const name = "win-notready"
		h := newHost(t, name, neverReady)
		token, id, err := c.CreateBootstrapToken(t.Context(), 10*time.Minute, "kube test "+name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.DeleteBootstrapToken(context.WithoutCancel(t.Context()), id) })
		t.Cleanup(func() {
			_, _ = h.tr.Run(context.WithoutCancel(t.Context()), "Stop-Service -Name 'kubelet'")
			_ = c.DeleteNode(context.WithoutCancel(t.Context()), name)
		})
		h.join(t, s, token, nil)
		// Registration takes a few seconds (TLS bootstrap); the wait must
		// see the Node and then report its Ready condition.
		ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
		defer cancel()
		_, err = c.WaitForNodeReady(ctx, name)
		var we *kube.NodeWaitError
		if !errors.As(err, &we) || !we.Registered || we.Node == nil {
			t.Fatalf("err = %v, want a registered NodeWaitError\nkubelet.log:\n%s", err, h.kubeletLog())
		}
		cond := kube.NodeReadyCondition(we.Node)
		if cond == nil || cond.Status != corev1.ConditionFalse {
			t.Fatalf("Ready condition %+v", cond)
		}
		msg := err.Error()
		for _, want := range []string{`Node "win-notready" registered but is not Ready`, "Ready is False", "reason " + cond.Reason, "cni plugin not initialized"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q: %s", want, msg)
			}
		}
	})
}
