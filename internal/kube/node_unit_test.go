package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

func taint(s string) corev1.Taint {
	kv, effect, _ := strings.Cut(s, ":")
	k, v, _ := strings.Cut(kv, "=")
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}
}

func taintStrings(ts []corev1.Taint) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ToString()
	}
	return out
}

func TestMergeTaints(t *testing.T) {
	current := []corev1.Taint{taint("node.kubernetes.io/not-ready:NoSchedule"), taint("os=windows:NoSchedule"), taint("mine=old:NoExecute"), taint("gone=1:NoSchedule"), taint("theirs=1:PreferNoSchedule")}
	owned := []taintKey{{"os", corev1.TaintEffectNoSchedule}, {"mine", corev1.TaintEffectNoExecute}, {"gone", corev1.TaintEffectNoSchedule}}
	want := []corev1.Taint{taint("os=windows:NoSchedule"), taint("mine=new:NoExecute"), taint("theirs=ours:NoSchedule")}
	got := taintStrings(mergeTaints(current, owned, want))
	// Others' taints first in their order, then ours; "theirs" with another
	// effect is another taint.
	expect := []string{"node.kubernetes.io/not-ready:NoSchedule", "theirs=1:PreferNoSchedule", "os=windows:NoSchedule", "mine=new:NoExecute", "theirs=ours:NoSchedule"}
	if !slices.Equal(got, expect) {
		t.Errorf("mergeTaints = %v\nwant %v", got, expect)
	}

	// An unchanged taint keeps its timeAdded.
	added := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cur := []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}}
	if m := mergeTaints(cur, []taintKey{{"k", corev1.TaintEffectNoExecute}}, []corev1.Taint{taint("k=v:NoExecute")}); m[0].TimeAdded == nil {
		t.Error("timeAdded of an unchanged taint was dropped")
	}
}

func TestTaintKeysRoundTrip(t *testing.T) {
	ts := []corev1.Taint{taint("os=windows:NoSchedule"), taint("example.com/a:NoExecute")}
	s := formatTaintKeys(ts)
	if s != "example.com/a:NoExecute,os:NoSchedule" {
		t.Errorf("formatTaintKeys = %q", s)
	}
	if got := parseTaintKeys(s + ", junk,:NoSchedule,"); !slices.Equal(got, []taintKey{{"example.com/a", "NoExecute"}, {"os", "NoSchedule"}}) {
		t.Errorf("parseTaintKeys = %v", got)
	}
	if got := parseTaintKeys(""); got != nil {
		t.Errorf("parseTaintKeys(\"\") = %v", got)
	}
}

func TestNodeSettingsPatch(t *testing.T) {
	node := func(providerID string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "win-0", ResourceVersion: "42", Annotations: map[string]string{OwnedTaintsAnnotation: "os:NoSchedule"}},
			Spec:       corev1.NodeSpec{ProviderID: providerID, Taints: taints},
		}
	}
	decode := func(t *testing.T, b []byte) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	t.Run("removing the last taint sends an empty list", func(t *testing.T) {
		b, err := nodeSettingsPatch(node("", taint("os=windows:NoSchedule")), NodeSettings{})
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		for _, want := range []string{`"resourceVersion":"42"`, `"taints":[]`} {
			if !strings.Contains(got, want) {
				t.Errorf("patch lacks %s: %s", want, got)
			}
		}
		for _, not := range []string{"providerID", "annotations"} {
			if strings.Contains(got, not) {
				t.Errorf("patch has %s: %s", not, got)
			}
		}
		// The one label every apply carries: this provider joined the Node.
		if want := `"labels":{"app.kubernetes.io/managed-by":"terraform-provider-windows"}`; !strings.Contains(got, want) {
			t.Errorf("patch lacks %s: %s", want, got)
		}
	})
	t.Run("the VM annotation is set, and kept by an apply without it", func(t *testing.T) {
		b, err := nodeSettingsPatch(node(""), NodeSettings{VM: NodeVM("vc-1", "vm-42")})
		if err != nil {
			t.Fatal(err)
		}
		if want := `"windows.wincluster.io/vm":"vc-1/vm-42"`; !strings.Contains(string(b), want) {
			t.Errorf("patch lacks %s: %s", want, b)
		}
		n := node("")
		n.Annotations[VMAnnotation] = NodeVM("vc-1", "vm-42")
		b, err = nodeSettingsPatch(n, NodeSettings{Labels: map[string]string{"a": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		if want := `"windows.wincluster.io/vm":"vc-1/vm-42"`; !strings.Contains(string(b), want) {
			t.Errorf("an apply without the VM drops it (server-side apply removes what it leaves out): %s", b)
		}
	})
	t.Run("no taints anywhere leaves the list out", func(t *testing.T) {
		b, err := nodeSettingsPatch(node(""), NodeSettings{Labels: map[string]string{"a": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		m := decode(t, b)
		if _, ok := m["spec"].(map[string]any)["taints"]; ok {
			t.Errorf("taints in %s", b)
		}
	})
	t.Run("providerID", func(t *testing.T) {
		b, err := nodeSettingsPatch(node("vsphere://a"), NodeSettings{})
		if err != nil || !strings.Contains(string(b), `"providerID":"vsphere://a"`) {
			t.Errorf("an empty ProviderID must keep the Node's: %s, %v", b, err)
		}
		if _, err := nodeSettingsPatch(node("vsphere://a"), NodeSettings{ProviderID: "vsphere://a"}); err != nil {
			t.Errorf("the same providerID: %v", err)
		}
		_, err = nodeSettingsPatch(node("vsphere://a"), NodeSettings{ProviderID: "vsphere://b"})
		if err == nil || !strings.Contains(err.Error(), `"vsphere://a"`) || !strings.Contains(err.Error(), "cannot change once set") {
			t.Errorf("a different providerID: %v", err)
		}
	})
	t.Run("bad taints", func(t *testing.T) {
		for _, ts := range [][]corev1.Taint{
			{taint("a=1:NoSchedule"), taint("a=2:NoSchedule")},
			{taint("a=1:Sometimes")},
		} {
			if _, err := nodeSettingsPatch(node(""), NodeSettings{Taints: ts}); err == nil {
				t.Errorf("taints %v accepted", taintStrings(ts))
			}
		}
	})
}

func TestNodeWaitErrorMessages(t *testing.T) {
	deadline := context.DeadlineExceeded
	notReady := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "cni plugin not initialized"},
	}}}
	cases := []struct {
		err  *NodeWaitError
		want []string
	}{
		{&NodeWaitError{Name: "w", Want: wantReady, Err: deadline}, []string{`Node "w" never registered`, "bootstrap kubeconfig"}},
		{&NodeWaitError{Name: "w", Want: wantReady, Registered: true, Node: &corev1.Node{}, Err: deadline}, []string{"has not reported a Ready condition"}},
		{&NodeWaitError{Name: "w", Want: wantReady, Registered: true, Node: notReady, Err: deadline}, []string{"registered but is not Ready", "Ready is False, reason KubeletNotReady: cni plugin not initialized"}},
		{&NodeWaitError{Name: "w", Want: wantPodCIDR, Registered: true, Node: notReady, Err: deadline}, []string{"no pod CIDR", "--allocate-node-cidrs=true"}},
	}
	for _, tc := range cases {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
		if !errors.Is(tc.err, context.DeadlineExceeded) {
			t.Errorf("%q does not wrap the deadline", msg)
		}
	}
}

func TestBootstrapTokenSecret(t *testing.T) {
	exp := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600))
	s := bootstrapTokenSecret("abcdef", "0123456789abcdef", exp, "windows_node win-0")
	if s.Name != "bootstrap-token-abcdef" || s.Namespace != "kube-system" || s.Type != "bootstrap.kubernetes.io/token" {
		t.Errorf("secret %s/%s type %s", s.Namespace, s.Name, s.Type)
	}
	want := map[string]string{
		"token-id": "abcdef", "token-secret": "0123456789abcdef", "description": "windows_node win-0",
		"expiration": "2026-05-06T06:08:09Z", "usage-bootstrap-authentication": "true",
		"auth-extra-groups": BootstrapTokenGroup,
	}
	if fmt.Sprint(s.StringData) != fmt.Sprint(want) {
		t.Errorf("data %v\nwant %v", s.StringData, want)
	}
}

func TestCreateBootstrapTokenRejectsNoLifetime(t *testing.T) {
	c := fakeClient(t)
	if _, _, err := c.CreateBootstrapToken(context.Background(), 0, ""); err == nil {
		t.Error("a zero lifetime was accepted")
	}
	token, id, err := c.CreateBootstrapToken(context.Background(), time.Minute, "d")
	if err != nil || len(token) != 23 || token[:6] != id {
		t.Errorf("token %q id %q err %v", token, id, err)
	}
}

// TestStaleBootstrapTokenByName: the token an earlier join of a node left is
// found by the name its description derives, without a list, and deleted;
// another node's token stays.
func TestStaleBootstrapTokenByName(t *testing.T) {
	c := fakeClient(t)
	ctx := context.Background()
	if a, b := BootstrapTokenID("windows_node win-1"), BootstrapTokenID("windows_node win-1"); a != b || !bootstraputil.IsValidBootstrapTokenID(a) {
		t.Fatalf("ids %q, %q: want one valid id per description", a, b)
	}
	_, left, err := c.CreateBootstrapToken(ctx, time.Minute, "windows_node win-1")
	if err != nil {
		t.Fatal(err)
	}
	_, other, err := c.CreateBootstrapToken(ctx, time.Minute, "windows_node win-2")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreateBootstrapToken(ctx, time.Minute, "windows_node win-1"); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("a second token of the same join: %v, want AlreadyExists", err)
	}
	if err := c.DeleteStaleBootstrapTokens(ctx, "windows_node win-1"); err != nil {
		t.Fatal(err)
	}
	secrets := c.CoreV1().Secrets("kube-system")
	if _, err := secrets.Get(ctx, bootstraputil.BootstrapTokenSecretName(left), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stale token: %v, want it deleted", err)
	}
	if _, err := secrets.Get(ctx, bootstraputil.BootstrapTokenSecretName(other), metav1.GetOptions{}); err != nil {
		t.Errorf("another node's token: %v, want it kept", err)
	}
}

func TestClusterCA(t *testing.T) {
	pem := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	file := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(file, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tls  rest.TLSClientConfig
		ok   bool
	}{
		{"inline", rest.TLSClientConfig{CAData: pem, CAFile: "/nonexistent"}, true},
		{"file", rest.TLSClientConfig{CAFile: file}, true},
		{"insecure", rest.TLSClientConfig{Insecure: true}, false},
	} {
		got, err := (&Client{REST: &rest.Config{TLSClientConfig: c.tls}}).ClusterCA()
		if c.ok && (err != nil || string(got) != string(pem)) {
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "cluster_ca_certificate")) {
			t.Errorf("%s: %v, want an error naming kubernetes.cluster_ca_certificate", c.name, err)
		}
	}
}
