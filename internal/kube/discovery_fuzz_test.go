package kube

import (
	"context"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// FuzzDiscoverNetwork: whatever the cluster's kubeadm-config and
// kubelet-config ConfigMaps, flannel's net-conf.json, the static pods' flags
// and the DNS Service hold (anyone who may edit kube-system writes them),
// discovery never panics, and every fact it returns is well formed: CIDRs,
// an IP, a DNS-1123 domain. They go into the node's kubelet and CNI
// configuration.
func FuzzDiscoverNetwork(f *testing.F) {
	f.Add(kubeadmYAML, "clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\n",
		`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}`, "--cluster-cidr=10.244.0.0/16 --allocate-node-cidrs", "10.96.0.10")
	f.Add("networking:\n  podSubnet: 10.244.0.0/16,bogus\n  dnsDomain: \"a b\"\n", "clusterDomain: \"$(x)\"", `{"Network":"x","Backend":null}`, "--cluster-cidr", "None")
	f.Add("{{", "\x00", "{", "--service-cluster-ip-range=10.96.0.0/12,,", "")
	f.Fuzz(func(t *testing.T, kubeadm, kubelet, netConf, flags, dnsIP string) {
		c := fakeClient(t,
			configMap("kube-system", kubeadmConfigMap, map[string]string{"ClusterConfiguration": kubeadm}),
			configMap("kube-system", kubeletConfigMap, map[string]string{"kubelet": kubelet}),
			configMap("kube-flannel", networking.FlannelConfigMap, map[string]string{networking.FlannelNetConf: netConf}),
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kcm", Labels: map[string]string{"component": "kube-controller-manager"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kcm", Command: strings.Fields(flags)}}}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "apiserver", Labels: map[string]string{"component": "kube-apiserver"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "apiserver", Args: strings.Fields(flags)}}}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: kubeDNSService}, Spec: corev1.ServiceSpec{ClusterIP: dnsIP}},
		)
		n, err := c.DiscoverNetwork(context.Background())
		if err != nil {
			return // a ConfigMap that is not YAML or JSON: reported, not used
		}
		for _, cidr := range append(append([]string{}, n.ServiceCIDRs...), n.ClusterCIDRs...) {
			if _, _, err := net.ParseCIDR(cidr); err != nil {
				t.Fatalf("discovered CIDR %q (%+v)", cidr, n.Sources)
			}
		}
		if n.DNSServiceIP != "" && net.ParseIP(n.DNSServiceIP) == nil {
			t.Fatalf("discovered DNS Service IP %q", n.DNSServiceIP)
		}
		if errs := validation.IsDNS1123Subdomain(n.ClusterDomain); len(errs) > 0 {
			t.Fatalf("discovered cluster domain %q: %v", n.ClusterDomain, errs)
		}
		_, _ = networking.ParseFlannelNetConf(netConf)
		_ = parseFlags(strings.Fields(flags))
	})
}
