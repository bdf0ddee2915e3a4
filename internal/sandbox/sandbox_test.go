package sandbox

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
)

// clusterWait bounds each event-driven wait on the cluster; they normally
// end within a second or two.
const clusterWait = 30 * time.Second

// TestStartControlPlane starts the whole sandbox and checks what the provider
// relies on: version, DNS Service, bootstrap RBAC, pod CIDR allocation and
// TLS bootstrap of a kubelet client certificate with a bootstrap token.
// A cold control-plane build takes many minutes: run it with -timeout 30m
// the first time.
func TestStartControlPlane(t *testing.T) {
	if os.Getenv(controlplane.BinEnv) == "" && testing.Short() {
		t.Skipf("-short and %s unset: not building the control plane", controlplane.BinEnv)
	}
	ctx := t.Context()
	s, err := Start(ctx, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
			t.Errorf("temporary directory %s survived Stop: %v", s.Dir, err)
		}
	})
	t.Logf("sandbox ready in %s", s.ReadyIn.Round(time.Millisecond))
	logRSS(t, s)

	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)

	t.Run("version", func(t *testing.T) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ GitVersion string }
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != controlplane.KubernetesVersion {
			t.Errorf("gitVersion = %s, want %s", v.GitVersion, controlplane.KubernetesVersion)
		}
	})

	t.Run("kube-dns", func(t *testing.T) {
		svc, err := cs.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if svc.Spec.ClusterIP != controlplane.DNSServiceIP || svc.Labels["k8s-app"] != "kube-dns" {
			t.Errorf("kube-dns: clusterIP %s, labels %v", svc.Spec.ClusterIP, svc.Labels)
		}
		ports := map[string]string{}
		for _, p := range svc.Spec.Ports {
			ports[p.Name] = string(p.Protocol) + "/" + p.TargetPort.String()
		}
		want := map[string]string{"dns": "UDP/53", "dns-tcp": "TCP/53", "metrics": "TCP/9153"}
		for name, w := range want {
			if ports[name] != w {
				t.Errorf("kube-dns port %s = %q, want %s", name, ports[name], w)
			}
		}
	})

	t.Run("bootstrap RBAC", func(t *testing.T) {
		bootstrapper := []string{"system:bootstrappers", controlplane.BootstrapTokenGroup, "system:authenticated"}
		checks := []struct {
			user   string
			groups []string
			attrs  authorizationv1.ResourceAttributes
		}{
			{"system:bootstrap:abcdef", bootstrapper, authorizationv1.ResourceAttributes{
				Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create"}},
			{"system:bootstrap:abcdef", bootstrapper, authorizationv1.ResourceAttributes{
				Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "nodeclient", Verb: "create"}},
			{"system:bootstrap:abcdef", bootstrapper, authorizationv1.ResourceAttributes{Resource: "nodes", Verb: "get"}},
			{"system:node:win-0", []string{"system:nodes"}, authorizationv1.ResourceAttributes{
				Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "selfnodeclient", Verb: "create"}},
			{"system:anonymous", []string{"system:unauthenticated"}, authorizationv1.ResourceAttributes{
				Namespace: "kube-public", Resource: "configmaps", Name: "cluster-info", Verb: "get"}},
			{"system:bootstrap:abcdef", bootstrapper, authorizationv1.ResourceAttributes{
				Namespace: "kube-system", Resource: "configmaps", Name: "kubeadm-config", Verb: "get"}},
		}
		for _, c := range checks {
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: c.user, Groups: c.groups, ResourceAttributes: &c.attrs},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !sar.Status.Allowed {
				t.Errorf("%s may not %s %s/%s %s: %s", c.user, c.attrs.Verb, c.attrs.Resource, c.attrs.Subresource, c.attrs.Name, sar.Status.Reason)
			}
		}
		cm, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubeadm-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"kubeadm.k8s.io/v1beta4", "podSubnet: 10.244.0.0/16", "serviceSubnet: 10.96.0.0/12"} {
			if !strings.Contains(cm.Data["ClusterConfiguration"], want) {
				t.Errorf("kubeadm-config lacks %q:\n%s", want, cm.Data["ClusterConfiguration"])
			}
		}
	})

	t.Run("node pod CIDR", func(t *testing.T) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sandbox-cidr-test"}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var cidr string
		nodes := cs.CoreV1().Nodes()
		waitUntil(t, listWatch(nodes.List, nodes.Watch, "metadata.name", node.Name), &corev1.Node{}, func(ev watch.Event) bool {
			cidr = ev.Object.(*corev1.Node).Spec.PodCIDR
			return cidr != ""
		})
		_, cluster, _ := net.ParseCIDR(controlplane.ClusterCIDR)
		ip, n, err := net.ParseCIDR(cidr)
		if ones, _ := n.Mask.Size(); err != nil || !cluster.Contains(ip) || ones != controlplane.NodeCIDRMaskSize {
			t.Errorf("podCIDR %q is not a /%d of %s", cidr, controlplane.NodeCIDRMaskSize, controlplane.ClusterCIDR)
		}
	})

	t.Run("cluster DNS", func(t *testing.T) { testClusterDNS(ctx, t, s, cs) })
	t.Run("Antrea's Linux side", func(t *testing.T) { testAntreaLinuxSide(ctx, t, s, cs) })
	t.Run("Windows host of a clone", func(t *testing.T) { testWindowsHost(ctx, t, s) })
	t.Run("TLS bootstrap", func(t *testing.T) {
		testTLSBootstrap(ctx, t, s, cs)
	})
}

// testTLSBootstrap does what a joining kubelet does: with a bootstrap token it
// requests a client certificate, which the controller manager approves and
// signs with the sandbox CA; meanwhile the bootstrap signer signs cluster-info.
func testTLSBootstrap(ctx context.Context, t *testing.T, s *Sandbox, cs kubernetes.Interface) {
	const tokenID, tokenSecret = "abcdef", "0123456789abcdef"
	_, err := cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + tokenID, Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": tokenID, "token-secret": tokenSecret,
			"expiration":                     time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
			"auth-extra-groups": controlplane.BootstrapTokenGroup,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The bootstrap client trusts only the CA file, as a kubelet would.
	caPEM, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	boot := kubernetes.NewForConfigOrDie(&rest.Config{
		Host:            s.ControlPlane.Server,
		BearerToken:     tokenID + "." + tokenSecret,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
	})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:win-boot", Organization: []string{"system:nodes"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := boot.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "node-csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a CSR with a bootstrap token: %v", err)
	}

	var issued []byte
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	waitUntil(t, listWatch(csrs.List, csrs.Watch, "metadata.name", csr.Name), &certificatesv1.CertificateSigningRequest{},
		func(ev watch.Event) bool {
			issued = ev.Object.(*certificatesv1.CertificateSigningRequest).Status.Certificate
			return len(issued) > 0
		})
	block, _ := pem.Decode(issued)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: s.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("kubelet client certificate does not verify with the sandbox CA: %v", err)
	}

	cms := cs.CoreV1().ConfigMaps("kube-public")
	waitUntil(t, listWatch(cms.List, cms.Watch, "metadata.name", "cluster-info"), &corev1.ConfigMap{}, func(ev watch.Event) bool {
		_, ok := ev.Object.(*corev1.ConfigMap).Data["jws-kubeconfig-"+tokenID]
		return ok
	})
}

func listWatch[L runtime.Object](
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	field, value string,
) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector(field, value).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return watchFn(ctx, o)
		},
	}
}

func waitUntil(t *testing.T, lw cache.ListerWatcher, obj runtime.Object, cond func(watch.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	_, err := watchtools.UntilWithSync(ctx, lw, obj, nil, func(ev watch.Event) (bool, error) {
		return ev.Type != watch.Deleted && cond(ev), nil
	})
	if err != nil {
		t.Fatalf("waiting for %T: %v", obj, err)
	}
}

// logRSS reports each component's resident memory (Linux only).
func logRSS(t *testing.T, s *Sandbox) {
	for name, pid := range s.ControlPlane.PIDs() {
		if rss, ok := ResidentMemory(pid); ok {
			t.Logf("%s RSS %d MiB", name, rss>>20)
		}
	}
}
