package controlplane

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

// Cluster settings, the values kubeadm uses by default (pod CIDR: flannel's).
const (
	KubernetesVersion = "v1.36.3"
	ServiceCIDR       = "10.96.0.0/12"
	ClusterCIDR       = "10.244.0.0/16"
	NodeCIDRMaskSize  = 24
	DNSServiceIP      = "10.96.0.10"
	DNSDomain         = "cluster.local"
	ClusterName       = "sandbox"
	// ServiceAccountIssuer is what kubeadm configures.
	ServiceAccountIssuer = "https://kubernetes.default.svc." + DNSDomain
)

// layout is where each component finds its files and listens.
type layout struct {
	dir    string // the control plane's working directory
	binDir string
	pki    *pki.Bundle

	etcdClientPort, etcdPeerPort int
	apiserverPort                int
	controllerManagerKubeconfig  string
	schedulerKubeconfig          string
	allocateNodeCIDRs            bool
}

func (l *layout) bin(name string) string { return filepath.Join(l.binDir, name) }

// restartArgs returns the arguments of a component the kubelet would
// restart when it exits (kubeadm's static pods for the controller manager
// and the scheduler), and false for those whose exit fails the sandbox:
// etcd's and the API server's are never expected (StopAPIServer marks its
// own).
func (l *layout) restartArgs(name string) ([]string, bool) {
	switch name {
	case ControllerManager:
		return l.controllerManagerArgs(), true
	case Scheduler:
		return l.schedulerArgs(), true
	}
	return nil, false
}

func (l *layout) etcdURL() string { return "https://127.0.0.1:" + strconv.Itoa(l.etcdClientPort) }

func (l *layout) apiserverURL() string { return "https://127.0.0.1:" + strconv.Itoa(l.apiserverPort) }

func (l *layout) etcdArgs() []string {
	peer := "http://127.0.0.1:" + strconv.Itoa(l.etcdPeerPort)
	return []string{
		"--name=sandbox",
		"--data-dir=" + filepath.Join(l.dir, "etcd"),
		"--listen-client-urls=" + l.etcdURL(),
		"--advertise-client-urls=" + l.etcdURL(),
		// A single member never talks to peers; plain HTTP on loopback is enough.
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=sandbox=" + peer,
		"--initial-cluster-state=new",
		"--cert-file=" + l.pki.Etcd.CertFile,
		"--key-file=" + l.pki.Etcd.KeyFile,
		"--trusted-ca-file=" + l.pki.CAFile,
		"--client-cert-auth=true",
		// The data is thrown away with the sandbox; fsync only costs time.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

func (l *layout) apiserverArgs() []string {
	p := l.pki
	return []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(l.apiserverPort),
		"--tls-cert-file=" + p.APIServer.CertFile,
		"--tls-private-key-file=" + p.APIServer.KeyFile,
		"--client-ca-file=" + p.CAFile,
		"--etcd-servers=" + l.etcdURL(),
		"--etcd-cafile=" + p.CAFile,
		"--etcd-certfile=" + p.APIServerEtcdClient.CertFile,
		"--etcd-keyfile=" + p.APIServerEtcdClient.KeyFile,
		"--kubelet-client-certificate=" + p.APIServerKubeletClient.CertFile,
		"--kubelet-client-key=" + p.APIServerKubeletClient.KeyFile,
		"--service-account-issuer=" + ServiceAccountIssuer,
		"--service-account-key-file=" + p.ServiceAccountPubFile,
		"--service-account-signing-key-file=" + p.ServiceAccountKeyFile,
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-bootstrap-token-auth=true",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		// The default reconciler would publish 127.0.0.1 as the endpoint of
		// the kubernetes Service, which the API rejects as a loopback address.
		"--endpoint-reconciler-type=none",
		// The aggregation layer, as kubeadm configures it (with the sandbox
		// CA in place of a separate front-proxy CA, restricted to one name).
		"--requestheader-client-ca-file=" + p.CAFile,
		"--requestheader-allowed-names=" + pki.FrontProxyClientUser,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.FrontProxyClient.CertFile,
		"--proxy-client-key-file=" + p.FrontProxyClient.KeyFile,
		"--profiling=false",
	}
}

// The leader election of the controller manager and the scheduler outlasts
// a short API server outage (StopAPIServer): with the defaults (15 s lease,
// 10 s renew deadline) a component that cannot renew its lease for 10 s
// exits ("leaderelection lost"), as it must where another member could take
// over, and the kubelet restarts it (the sandbox does too: monitor). The
// sandbox has one member and its API server restarting on a loaded machine
// takes longer than 10 s: the longer lease spares every outage a restart
// and the wait for the old lease to expire; an outage past the renew
// deadline still gets both, as a real cluster does.
const (
	leaseDuration = "120s"
	renewDeadline = "90s"
)

func (l *layout) controllerManagerArgs() []string {
	p := l.pki
	kc := l.controllerManagerKubeconfig
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		// Nothing reads its health or metrics endpoint, and a port chosen
		// for it could be taken before it binds: it serves none.
		"--secure-port=0",
		"--leader-elect=true",
		"--leader-elect-lease-duration=" + leaseDuration,
		"--leader-elect-renew-deadline=" + renewDeadline,
		"--cluster-name=" + ClusterName,
		// The sandbox CA is the cluster CA: kubelet certificates it signs
		// verify with SANDBOX_CA_FILE like everything else.
		"--cluster-signing-cert-file=" + p.CAFile,
		"--cluster-signing-key-file=" + p.CAKeyFile,
		"--root-ca-file=" + p.CAFile,
		"--service-account-private-key-file=" + p.ServiceAccountKeyFile,
		"--use-service-account-credentials=true",
		// bootstrapsigner signs cluster-info for token discovery and
		// tokencleaner deletes expired bootstrap tokens; both are off by default.
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--allocate-node-cidrs=" + strconv.FormatBool(l.allocateNodeCIDRs),
		"--cluster-cidr=" + ClusterCIDR,
		fmt.Sprintf("--node-cidr-mask-size=%d", NodeCIDRMaskSize),
		"--service-cluster-ip-range=" + ServiceCIDR,
		// With per-controller service-account credentials, startup makes a
		// few requests per controller; at the default 20 QPS the client-side
		// limiter alone delays leadership by seconds.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	}
}

func (l *layout) schedulerArgs() []string {
	kc := l.schedulerKubeconfig
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		// Nothing reads its health or metrics endpoint, and a port chosen
		// for it could be taken before it binds: it serves none.
		"--secure-port=0",
		"--leader-elect=true",
		"--leader-elect-lease-duration=" + leaseDuration,
		"--leader-elect-renew-deadline=" + renewDeadline,
		"--profiling=false",
	}
}
