package kubeletsim_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
)

// TestJoin runs windows_node's join steps over WinRM against a simulated
// host, with a bootstrap token created as windows_node creates it, and checks
// what the real control plane then holds.
func TestJoin(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	ctx := context.Background()
	const name = "win-join"
	n := newNode(t, name, hostOptions{})
	token := createBootstrapToken(t, cs)
	if err := n.join(t, joinConfig(s, name, token)); err != nil {
		t.Fatalf("join: %v\nkubelet.log:\n%s", err, n.kubeletLog())
	}

	node := waitForNode(t, cs, name, "Ready", nodeReady)
	t.Run("csr", func(t *testing.T) {
		csrs, err := cs.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, c := range csrs.Items {
			if c.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || !strings.HasPrefix(c.Spec.Username, "system:bootstrap:"+token[:6]) {
				continue
			}
			found = true
			approved := false
			for _, cond := range c.Status.Conditions {
				if cond.Type == certificatesv1.CertificateApproved && cond.Reason == "AutoApproved" {
					approved = true
				}
			}
			if !approved || len(c.Status.Certificate) == 0 {
				t.Errorf("CSR %s: approved %v, certificate %d bytes", c.Name, approved, len(c.Status.Certificate))
			}
		}
		if !found {
			t.Fatalf("no kubelet client CSR from bootstrap token %s", token[:6])
		}
	})
	t.Run("kubelet firewall rule", func(t *testing.T) {
		// The join scoped the kubelet's port to the cluster's addresses.
		out, stderr, code := n.Host.Console(ctx, "$r = Get-NetFirewallRule -Name 'kubelet-10250'\n\"$($r.Enabled)|$($r.RemoteAddress -join ';')\"")
		if want := "True|127.0.0.1;" + controlplane.ClusterCIDR; code != 0 || strings.TrimSpace(out) != want {
			t.Errorf("kubelet-10250 rule: exit %d %q %s, want %q", code, out, stderr, want)
		}
	})
	t.Run("files on the host", func(t *testing.T) {
		pemData, err := n.Host.ReadFile(bootstrap.KubeletCertDir + `\kubelet-client-current.pem`)
		if err != nil || !strings.Contains(string(pemData), "BEGIN CERTIFICATE") || !strings.Contains(string(pemData), "PRIVATE KEY") {
			t.Fatalf("kubelet-client-current.pem: %v\n%s", err, pemData)
		}
		kc, err := n.Host.ReadFile(bootstrap.NodeKubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.Load(kc)
		if err != nil {
			t.Fatal(err)
		}
		auth := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
		if auth.ClientCertificate != bootstrap.KubeletCertDir+`\kubelet-client-current.pem` || auth.Token != "" {
			t.Errorf("node kubeconfig auth = %+v", auth)
		}
	})
	t.Run("node", func(t *testing.T) {
		wantLabels := map[string]string{
			"example.com/pool": "web", "kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64",
			"kubernetes.io/hostname": name, "node.kubernetes.io/windows-build": "10.0.20348",
		}
		for k, v := range wantLabels {
			if node.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
			}
		}
		hasTaint := false
		for _, tn := range node.Spec.Taints {
			if tn.Key == "os" && tn.Value == "windows" && tn.Effect == corev1.TaintEffectNoSchedule {
				hasTaint = true
			}
		}
		if !hasTaint {
			t.Errorf("taints %v lack os=windows:NoSchedule", node.Spec.Taints)
		}
		ni := node.Status.NodeInfo
		want := corev1.NodeSystemInfo{
			OperatingSystem: "windows", Architecture: "amd64", OSImage: "Windows Server 2022 Datacenter",
			KernelVersion: "10.0.20348.2340", KubeletVersion: kubeletVersion,
			ContainerRuntimeVersion: "containerd://" + containerdVersion,
			SystemUUID:              "4210F7C2-5D2E-6C35-BD31-2A6F0C1E9A11",
		}
		got := corev1.NodeSystemInfo{
			OperatingSystem: ni.OperatingSystem, Architecture: ni.Architecture, OSImage: ni.OSImage,
			KernelVersion: ni.KernelVersion, KubeletVersion: ni.KubeletVersion,
			ContainerRuntimeVersion: ni.ContainerRuntimeVersion, SystemUUID: ni.SystemUUID,
		}
		if got != want {
			t.Errorf("nodeInfo = %+v\nwant %+v", got, want)
		}
		if c := node.Status.Capacity; c.Cpu().String() != "4" || c.Memory().String() != "8Gi" || c.Pods().String() != "110" {
			t.Errorf("capacity = %v", c)
		}
		if a := node.Status.Addresses; len(a) == 0 || a[0].Type != corev1.NodeInternalIP || a[0].Address != "127.0.0.1" {
			t.Errorf("addresses = %v", a)
		}
	})
	node = waitForNode(t, cs, name, "given a pod CIDR", func(n *corev1.Node) bool { return n.Spec.PodCIDR != "" })
	_, podNet, err := net.ParseCIDR(node.Spec.PodCIDR)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("lease renewed", func(t *testing.T) {
		// The kubelet creates its Lease just after it registers the Node,
		// which can be after the Node turned Ready: wait for it first.
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
			return err == nil, nil
		}); err != nil {
			t.Fatalf("lease %s never created: %v", name, err)
		}
		first := leaseRenewTime(t, cs, name)
		if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
			return leaseRenewTime(t, cs, name).After(first), nil
		}); err != nil {
			t.Fatalf("lease not renewed after %s: %v", first, err)
		}
	})

	t.Run("pods run and are deleted", func(t *testing.T) {
		runPods(t, cs, podNet, name)
	})
	t.Run("log", func(t *testing.T) {
		log := n.kubeletLog()
		for _, want := range []string{`"Kubelet version" kubeletVersion="v1.36.3"`, `clusterDNS="10.96.0.10"`, `"Successfully registered node" node="win-join"`, `"Waiting for client certificate to be issued"`} {
			if !strings.Contains(log, want) {
				t.Errorf("kubelet.log lacks %s", want)
			}
		}
	})

	t.Run("stop and restart", func(t *testing.T) {
		n.run(t, "Stop-Service -Name 'kubelet'")
		stoppedAt := leaseRenewTime(t, cs, name)
		time.Sleep(11 * time.Second)
		if got := leaseRenewTime(t, cs, name); !got.Equal(stoppedAt) {
			t.Fatalf("lease renewed after the kubelet stopped: %s -> %s", stoppedAt, got)
		}
		// A restart uses the node's own certificate; no new CSR.
		n.run(t, "Start-Service -Name 'kubelet'")
		n.waitForLog(t, "Kubeconfig exists and is valid, skipping bootstrap", 10*time.Second)
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
			return leaseRenewTime(t, cs, name).After(stoppedAt), nil
		}); err != nil {
			t.Fatalf("lease not renewed after the restart: %v\n%s", err, n.kubeletLog())
		}
		waitForNode(t, cs, name, "Ready", nodeReady)
	})
}

func leaseRenewTime(t *testing.T, cs kubernetes.Interface, name string) time.Time {
	t.Helper()
	l, err := cs.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("lease %s: %v", name, err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != name || l.Spec.RenewTime == nil {
		t.Fatalf("lease %s: %+v", name, l.Spec)
	}
	return l.Spec.RenewTime.Time
}

// runPods schedules a Deployment onto the Windows node through the real
// scheduler, waits for its pods to run with addresses from the node's pod
// CIDR, then deletes one and waits until it is gone.
func runPods(t *testing.T, cs kubernetes.Interface, podNet *net.IPNet, nodeName string) {
	ctx := context.Background()
	ns := "default"
	replicas := int32(2)
	labels := map[string]string{"app": "iis-" + nodeName}
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "iis-" + nodeName},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/hostname": nodeName},
					Tolerations:  []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
					Containers:   []corev1.Container{{Name: "iis", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}},
				},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AppsV1().Deployments(ns).Delete(context.Background(), "iis-"+nodeName, metav1.DeleteOptions{})
	})
	sel := "app=iis-" + nodeName
	var running []corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		running = running[:0]
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running = append(running, p)
			}
		}
		return len(running) == int(replicas), nil
	})
	if err != nil {
		t.Fatalf("pods never ran: %v", err)
	}
	seen := map[string]bool{}
	for _, p := range running {
		ip := net.ParseIP(p.Status.PodIP)
		if p.Spec.NodeName != nodeName || ip == nil || !podNet.Contains(ip) || seen[p.Status.PodIP] {
			t.Errorf("pod %s on %s with IP %q (pod CIDR %s)", p.Name, p.Spec.NodeName, p.Status.PodIP, podNet)
		}
		seen[p.Status.PodIP] = true
		if len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready {
			t.Errorf("pod %s container statuses %+v", p.Name, p.Status.ContainerStatuses)
		}
	}
	victim := running[0]
	if err := cs.CoreV1().Pods(ns).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, victim.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("pod %s was never deleted: %v", victim.Name, err)
	}
}
