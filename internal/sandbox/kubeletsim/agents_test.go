package kubeletsim_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestAgentsIdentity: the old design (kube-proxy and flanneld with the
// node's own kubeconfig, identity system:node:<name>) is refused by the real
// Node authorizer; the same agents on ServiceAccounts bound to
// system:node-proxier and to flannel's ClusterRole start.
func TestAgentsIdentity(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	const name = "win-agents"
	n := newNode(t, name, hostOptions{})
	if err := n.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, n.kubeletLog())
	}
	waitForNode(t, cs, name, "given a pod CIDR", func(nd *corev1.Node) bool { return nd.Spec.PodCIDR != "" })
	netConf := `C:\etc\kube-flannel\net-conf.json`
	if err := n.Host.WriteFile(netConf, []byte(`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}`)); err != nil {
		t.Fatal(err)
	}
	flannelArgs := func(kubeconfig string) []string {
		return []string{"--kube-subnet-mgr", "--kubeconfig-file=" + kubeconfig, "--net-config-path=" + netConf, "--iface=127.0.0.1"}
	}
	proxyArgs := func(kubeconfig string) []string {
		return []string{"--kubeconfig=" + kubeconfig, "--hostname-override=" + name, "--proxy-mode=kernelspace",
			"--network-name=flannel.4096", "--source-vip=10.244.9.2", "--cluster-cidr=10.244.0.0/16", "--v=2"}
	}
	env := map[string]string{"NODE_NAME": name}

	t.Run("flanneld as the node", func(t *testing.T) {
		code, out := runAgent(t, n.Host, kubeletsimtest.FlanneldExe, flannelArgs(bootstrap.NodeKubeconfig), env, 30*time.Second)
		want := `failed to list *v1.Node: nodes is forbidden: User \"system:node:win-agents\" cannot list resource \"nodes\" in API group \"\" at the cluster scope: node 'win-agents' cannot read all nodes, only its own Node object`
		if code != 1 || !strings.Contains(out, want) {
			t.Fatalf("exit %d, stderr:\n%s\nwant %s", code, out, want)
		}
	})
	flannelKC := serviceAccountKubeconfig(t, s, n.Host, "flannel", []rbacv1.PolicyRule{
		// flannel-io/flannel Documentation/kube-flannel.yml, ClusterRole flannel.
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}},
	}, "")
	t.Run("flanneld on its ServiceAccount", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- n.Host.Run(ctx, &winsim.Process{Path: kubeletsimtest.FlanneldExe, Args: flannelArgs(flannelKC), Env: env, Stderr: &stderr})
		}()
		waitFor(t, "flanneld running its backend", func() bool { return strings.Contains(stderr.String(), "Running backend.") }, done, &stderr)
		nd, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil || nd.Annotations["flannel.alpha.coreos.com/backend-type"] != "vxlan" {
			t.Errorf("node annotations %v (%v)", nd.Annotations, err)
		}
		if b, err := n.Host.ReadFile(`C:\run\flannel\subnet.env`); err != nil || !strings.Contains(string(b), "FLANNEL_NETWORK=10.244.0.0/16") {
			t.Errorf("subnet.env: %q %v", b, err)
		}
		// Written beside and renamed into place, as flannel's WriteSubnetFile does.
		if n.Host.FileExists(`C:\run\flannel\.subnet.env`) {
			t.Error("the temporary .subnet.env was left behind")
		}
	})
	t.Run("kube-proxy as the node", func(t *testing.T) {
		code, out := runAgent(t, n.Host, bootstrap.KubeProxyExe, proxyArgs(bootstrap.NodeKubeconfig), nil, 30*time.Second)
		want := `failed to list *v1.EndpointSlice: endpointslices.discovery.k8s.io is forbidden: User \"system:node:win-agents\" cannot list resource \"endpointslices\"`
		if code != 1 || !strings.Contains(out, want) {
			t.Fatalf("exit %d, stderr:\n%s\nwant %s", code, out, want)
		}
	})
	proxyKC := serviceAccountKubeconfig(t, s, n.Host, "kube-proxy", nil, "system:node-proxier")
	t.Run("kube-proxy on its ServiceAccount", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- n.Host.Run(ctx, &winsim.Process{Path: bootstrap.KubeProxyExe, Args: proxyArgs(proxyKC), Stderr: &stderr})
		}()
		waitFor(t, "kube-proxy synced", func() bool { return strings.Contains(stderr.String(), "endpoint slice config") }, done, &stderr)
	})
	t.Run("unknown flag", func(t *testing.T) {
		code, out := runAgent(t, n.Host, bootstrap.KubeProxyExe, []string{"--bogus"}, nil, 5*time.Second)
		if code != 1 || !strings.Contains(out, "Error: unknown flag: --bogus") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
}

// runAgent runs an agent that is expected to exit.
func runAgent(t *testing.T, h *winsim.Host, exe string, args []string, env map[string]string, timeout time.Duration) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stderr syncBuffer
	code := h.Run(ctx, &winsim.Process{Path: exe, Args: args, Env: env, Stderr: &stderr})
	if ctx.Err() != nil {
		t.Fatalf("%s did not exit in %s:\n%s", exe, timeout, stderr.String())
	}
	return code, stderr.String()
}

func waitFor(t *testing.T, what string, cond func() bool, done <-chan int, out *syncBuffer) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case code := <-done:
			t.Fatalf("exited with %d before %s:\n%s", code, what, out.String())
		case <-deadline:
			t.Fatalf("never %s:\n%s", what, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serviceAccountKubeconfig creates kube-system/<name> bound to a new
// ClusterRole with rules (or to an existing one), requests a token for it
// and writes a kubeconfig with that token on the host.
func serviceAccountKubeconfig(t *testing.T, s *sandbox.Sandbox, h *winsim.Host, name string, rules []rbacv1.PolicyRule, role string) string {
	t.Helper()
	cs := s.ControlPlane.Client
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if role == "" {
		role = name
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-test"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "kube-system"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := `C:\k\` + name + `.token`
	if err := h.WriteFile(tokenFile, []byte(tr.Status.Token)); err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: s.ControlPlane.Server, CertificateAuthorityData: s.CA.CertPEM}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {TokenFile: tokenFile}},
		Contexts:       map[string]*clientcmdapi.Context{"x": {Cluster: "c", AuthInfo: "u"}},
		CurrentContext: "x",
	}
	data, err := clientcmd.Write(kc)
	if err != nil {
		t.Fatal(err)
	}
	path := `C:\k\` + name + `.kubeconfig`
	if err := h.WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	return path
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
