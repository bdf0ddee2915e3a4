package kube

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

const kubeadmYAML = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.36.3
networking:
  dnsDomain: kubeadm.example
  podSubnet: 10.244.0.0/16,fd00:10:244::/56
  serviceSubnet: 10.96.0.0/12
`

func fakeClient(t *testing.T, objects ...runtime.Object) *Client {
	t.Helper()
	cs := fake.NewClientset(objects...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.36.3"}
	// The same objects through a dynamic client, as a mode's Detect reads
	// some (Antrea's DaemonSet for its image), serving Calico's kinds too.
	return &Client{Interface: cs, REST: &rest.Config{Host: "https://127.0.0.1:6443"}, Dynamic: fakeCalico(t, objects...)}
}

// fakeCalico serves Calico's crd.projectcalico.org/v1 kinds the plan checks
// read, holding objects.
func fakeCalico(t *testing.T, objects ...runtime.Object) *dynamicfake.FakeDynamicClient {
	t.Helper()
	kinds := map[schema.GroupVersionResource]string{}
	for resource, kind := range map[string]string{"ippools": "IPPoolList", "ipamconfigs": "IPAMConfigList", "felixconfigurations": "FelixConfigurationList"} {
		kinds[schema.GroupVersionResource{Group: networking.CalicoCRDGroup, Version: networking.CalicoCRDVersion, Resource: resource}] = kind
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(clientgoscheme.Scheme, kinds, objects...)
}

func calicoObject(kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": spec}}
}

// TestDetectCNICalicoConfig: Calico's pools, IPAM configuration and Felix
// configuration are read from its CRDs, with Felix's defaults for what
// FelixConfiguration leaves out.
func TestDetectCNICalicoConfig(t *testing.T) {
	c := fakeClient(t, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "calico-system", Name: "calico-node"}})
	c.Dynamic = fakeCalico(t,
		calicoObject("IPPool", "default-ipv4-ippool", map[string]any{"cidr": "192.168.0.0/16", "ipipMode": "Always", "vxlanMode": "Never", "blockSize": int64(26)}),
		calicoObject("IPAMConfig", "default", map[string]any{"strictAffinity": true, "autoAllocateBlocks": true}),
		calicoObject("FelixConfiguration", "default", map[string]any{"vxlanVNI": int64(4097)}),
	)
	cni, err := c.DetectCNI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := networking.CalicoConfig{Group: networking.CalicoCRDGroup, StrictAffinity: true, IPAMConfigFound: true, VXLANVNI: 4097, VXLANPort: 4789,
		Pools: []networking.CalicoPool{{Name: "default-ipv4-ippool", CIDR: "192.168.0.0/16", VXLANMode: "Never", IPIPMode: "Always", BlockSize: 26}}}
	if cni.Calico() == nil || !reflect.DeepEqual(*cni.Calico(), want) {
		t.Fatalf("Calico config = %+v, want %+v", cni.Calico(), want)
	}
	if v := networking.CheckPlugin(*cni, nil); v.Status != networking.VerdictFail || !strings.Contains(v.Message, "ipipMode Always") {
		t.Errorf("verdict %+v, want a failure naming ipipMode", v)
	}
}

func configMap(namespace, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
}

func TestDiscoverNetworkPrefersLiveObjects(t *testing.T) {
	c := fakeClient(t,
		&networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "fd00:10:96::/112"}}},
		configMap("kube-system", "kubeadm-config", map[string]string{"ClusterConfiguration": kubeadmYAML}),
		configMap("kube-system", "kubelet-config", map[string]string{"kubelet": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDomain: kubelet.example\n"}),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10"}},
		// Each API server's advertised address, as it reconciles it; an
		// endpoint not ready and a value that is no address are passed over.
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes",
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}}, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.12"}}, {Addresses: []string{"10.0.0.11", "x"}},
				{Addresses: []string{"10.0.0.13"}, Conditions: discoveryv1.EndpointConditions{Ready: new(bool)}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other",
			Labels: map[string]string{discoveryv1.LabelServiceName: "other"}}, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.9.9.9"}}}},
	)
	n, err := c.DiscoverNetwork(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := ClusterNetwork{
		APIServerAddresses: []string{"10.0.0.11", "10.0.0.12"},
		APIEndpoint:        "https://127.0.0.1:6443", ServerVersion: "v1.36.3",
		ServiceCIDRs: []string{"10.96.0.0/12", "fd00:10:96::/112"}, ClusterCIDRs: []string{"10.244.0.0/16", "fd00:10:244::/56"},
		DNSServiceIP: "10.96.0.10", ClusterDomain: "kubelet.example",
		Sources: NetworkSources{
			ServiceCIDRs: "ServiceCIDR kubernetes", ClusterCIDRs: "kube-system/kubeadm-config networking.podSubnet",
			DNSServiceIP: "Service kube-system/kube-dns", ClusterDomain: "kube-system/kubelet-config clusterDomain",
			APIServerAddresses: "EndpointSlices of Service default/kubernetes",
		},
	}
	expectNetwork(t, n, want)
}

func TestDiscoverNetworkFallbacks(t *testing.T) {
	t.Run("kubeadm", func(t *testing.T) {
		c := fakeClient(t, configMap("kube-system", "kubeadm-config", map[string]string{"ClusterConfiguration": kubeadmYAML}))
		n, err := c.DiscoverNetwork(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		expectNetwork(t, n, ClusterNetwork{
			APIEndpoint: "https://127.0.0.1:6443", ServerVersion: "v1.36.3",
			ServiceCIDRs: []string{"10.96.0.0/12"}, ClusterCIDRs: []string{"10.244.0.0/16", "fd00:10:244::/56"}, ClusterDomain: "kubeadm.example",
			Sources: NetworkSources{
				ServiceCIDRs: "kube-system/kubeadm-config networking.serviceSubnet", ClusterCIDRs: "kube-system/kubeadm-config networking.podSubnet",
				ClusterDomain: "kube-system/kubeadm-config networking.dnsDomain",
			},
		})
	})
	t.Run("flannel, static pods and a labelled DNS Service", func(t *testing.T) {
		c := fakeClient(t,
			configMap("kube-flannel", "kube-flannel-cfg", map[string]string{"net-conf.json": `{"Network": "10.42.0.0/16", "Backend": {"Type": "vxlan"}}`}),
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-apiserver-cp", Labels: map[string]string{"component": "kube-apiserver"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Command: []string{"kube-apiserver", "--service-cluster-ip-range=10.43.0.0/16", "--secure-port", "6443"}}}}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns", Labels: map[string]string{"k8s-app": "kube-dns"}}, Spec: corev1.ServiceSpec{ClusterIP: "10.43.0.10"}},
		)
		n, err := c.DiscoverNetwork(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		expectNetwork(t, n, ClusterNetwork{
			APIEndpoint: "https://127.0.0.1:6443", ServerVersion: "v1.36.3",
			ServiceCIDRs: []string{"10.43.0.0/16"}, ClusterCIDRs: []string{"10.42.0.0/16"}, DNSServiceIP: "10.43.0.10", ClusterDomain: "cluster.local",
			Sources: NetworkSources{
				ServiceCIDRs: "kube-apiserver --service-cluster-ip-range", ClusterCIDRs: "kube-flannel/kube-flannel-cfg net-conf.json Network",
				DNSServiceIP: "Service kube-system/coredns", ClusterDomain: "default (no kubelet-config or kubeadm-config names one)",
			},
		})
	})
	t.Run("controller manager flag", func(t *testing.T) {
		c := fakeClient(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-controller-manager-cp", Labels: map[string]string{"component": "kube-controller-manager"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Command: []string{"kube-controller-manager"},
				Args: []string{"--allocate-node-cidrs", "--cluster-cidr=192.168.0.0/16"}}}},
		})
		cl, err := c.DiscoverCluster(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cl.Network.ClusterCIDRs, []string{"192.168.0.0/16"}) || cl.Network.Sources.ClusterCIDRs != "kube-controller-manager --cluster-cidr" {
			t.Errorf("cluster CIDRs = %v from %q", cl.Network.ClusterCIDRs, cl.Network.Sources.ClusterCIDRs)
		}
		if enabled, known := cl.NodeCIDRAllocation(); !enabled || !known {
			t.Errorf("NodeCIDRAllocation = %v, %v; want true, true from the bare --allocate-node-cidrs flag", enabled, known)
		}
	})
}

func expectNetwork(t *testing.T, got *ClusterNetwork, want ClusterNetwork) {
	t.Helper()
	if got.APIEndpoint != want.APIEndpoint || got.ServerVersion != want.ServerVersion || got.DNSServiceIP != want.DNSServiceIP ||
		got.ClusterDomain != want.ClusterDomain || !slices.Equal(got.ServiceCIDRs, want.ServiceCIDRs) ||
		!slices.Equal(got.ClusterCIDRs, want.ClusterCIDRs) || !slices.Equal(got.APIServerAddresses, want.APIServerAddresses) || got.Sources != want.Sources {
		t.Errorf("network =\n%+v\nwant\n%+v", *got, want)
	}
}

func TestDetectCNI(t *testing.T) {
	ds := func(namespace, name string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	}
	cases := map[string]struct {
		objects []runtime.Object
		name    string
	}{
		"flannel in kube-system": {[]runtime.Object{configMap("kube-system", "kube-flannel-cfg", map[string]string{"net-conf.json": `{"Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}`})}, networking.PluginFlannel},
		"calico operator":        {[]runtime.Object{ds("calico-system", "calico-node")}, networking.PluginCalico},
		"calico manifest":        {[]runtime.Object{ds("kube-system", "calico-node")}, networking.PluginCalico},
		"antrea":                 {[]runtime.Object{ds("kube-system", "antrea-agent")}, networking.PluginAntrea},
		"nothing":                {nil, networking.PluginUnknown},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cni, err := fakeClient(t, tc.objects...).DetectCNI(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if cni.Name != tc.name {
				t.Errorf("DetectCNI = %+v, want %s", cni, tc.name)
			}
			if tc.name == networking.PluginFlannel && (cni.Flannel().ConfigMap != "kube-system/kube-flannel-cfg" || cni.Flannel().VNI != 4096 || cni.Flannel().Port != 4789) {
				t.Errorf("flannel config = %+v", cni.Flannel())
			}
		})
	}
}

func TestParseFlannelNetConf(t *testing.T) {
	cases := map[string]networking.FlannelConfig{
		`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}`:                        {Network: "10.244.0.0/16", Backend: "vxlan", VNI: 1, Port: 8472},
		`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}`: {Network: "10.244.0.0/16", Backend: "vxlan", VNI: 4096, Port: 4789},
		`{"Network":"10.244.0.0/16"}`:                                                   {Network: "10.244.0.0/16", Backend: "udp"},
		`{"IPv6Network":"fd00::/56","Backend":{"Type":"host-gw"}}`:                      {IPv6Network: "fd00::/56", Backend: "host-gw"},
	}
	for raw, want := range cases {
		got, err := networking.ParseFlannelNetConf(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if *got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, *got, want)
		}
	}
	for _, bad := range []string{"", "{", `{"Backend": "vxlan"}`} {
		if _, err := networking.ParseFlannelNetConf(bad); err == nil {
			t.Errorf("networking.ParseFlannelNetConf(%q) accepted it", bad)
		}
	}
}

func TestWindowsNodes(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	cl := Cluster{Nodes: []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "win-b", Labels: map[string]string{LabelOS: "windows"}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}, NodeInfo: corev1.NodeSystemInfo{KernelVersion: "10.0.17763.5458", KubeletVersion: "v1.36.3"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "win-a", Labels: map[string]string{LabelOS: "windows", LabelWindowsBuild: "10.0.20348"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "linux", Labels: map[string]string{LabelOS: "linux"}}},
	}}
	got := cl.WindowsNodes()
	want := []WindowsNode{{Name: "win-a", Build: "10.0.20348"}, {Name: "win-b", Build: "10.0.17763", Ready: true, KubeletVersion: "v1.36.3"}}
	if !slices.Equal(got, want) {
		t.Errorf("WindowsNodes = %+v, want %+v", got, want)
	}
}

func TestParseFlags(t *testing.T) {
	got := parseFlags([]string{"kube-controller-manager", "--allocate-node-cidrs", "--cluster-cidr", "10.0.0.0/8", "--v=2", "--leader-elect", "--x"})
	want := map[string]string{"allocate-node-cidrs": "true", "cluster-cidr": "10.0.0.0/8", "v": "2", "leader-elect": "true", "x": "true"}
	if len(got) != len(want) {
		t.Fatalf("parseFlags = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("flag %s = %q, want %q", k, got[k], v)
		}
	}
}

// TestDetectCNIReadsAntrea: with Antrea's ConfigMap beside its DaemonSet,
// discovery reads the agents' cluster-wide settings and the release, and the
// verdict on them names the setting that keeps Windows nodes out.
func TestDetectCNIReadsAntrea(t *testing.T) {
	agentDS := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "antrea-agent"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "install-cni", Image: "antrea/antrea-agent-ubuntu:v2.2.0"},
			{Name: "antrea-agent", Image: "antrea/antrea-agent-ubuntu:v2.2.0"},
		}}}}}
	cases := map[string]struct {
		conf   string
		status string
		says   string
	}{
		"encap, geneve": {"trafficEncapMode: \"encap\"\ntunnelType: \"geneve\"\n", networking.VerdictPass, "Release v2.2.0"},
		"defaults":      {"featureGates:\n", networking.VerdictPass, "trafficEncapMode encap with tunnelType geneve"},
		"noEncap":       {"trafficEncapMode: noEncap\n", networking.VerdictPass, "trafficEncapMode noEncap"},
		"noEncap without AntreaProxy": {"trafficEncapMode: noEncap\nantreaProxy:\n  enable: false\n", networking.VerdictFail,
			"noEncap with antreaProxy.enable: false"},
		"vxlan":             {"tunnelType: vxlan\n", networking.VerdictPass, "tunnelType vxlan"},
		"wireguard":         {"trafficEncapMode: encap\ntrafficEncryptionMode: wireguard\n", networking.VerdictFail, "trafficEncryptionMode: wireguard"},
		"networkPolicyOnly": {"trafficEncapMode: networkPolicyOnly\n", networking.VerdictFail, "{TrafficEncapMode: networkPolicyOnly}"},
		"gre":               {"tunnelType: gre\n", networking.VerdictFail, "tunnelType: gre"},
		"hybrid":            {"trafficEncapMode: hybrid\n", networking.VerdictFail, "trafficEncapMode: hybrid; the antrea mode runs Windows nodes in encap or noEncap only"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cni, err := fakeClient(t, agentDS, configMap("kube-system", "antrea-config", map[string]string{"antrea-agent.conf": tc.conf})).DetectCNI(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if a := cni.Antrea(); cni.Name != networking.PluginAntrea || a == nil || a.Version != "v2.2.0" || a.ConfigMap != "kube-system/antrea-config" {
				t.Fatalf("DetectCNI = %+v (antrea %+v)", cni, a)
			}
			v := networking.CheckPlugin(*cni, func(string) []string { return nil })
			if v.Status != tc.status || !strings.Contains(v.Message, tc.says) {
				t.Errorf("verdict = %+v, want %s saying %q", v, tc.status, tc.says)
			}
		})
	}
	t.Run("an old release", func(t *testing.T) {
		old := agentDS.DeepCopy()
		old.Spec.Template.Spec.Containers[1].Image = "projects.registry.vmware.com/antrea/antrea-ubuntu:v1.9.0"
		cni, err := fakeClient(t, old, configMap("kube-system", "antrea-config", map[string]string{"antrea-agent.conf": ""})).DetectCNI(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if v := networking.CheckPlugin(*cni, nil); v.Status != networking.VerdictFail || !strings.Contains(v.Message, "v1.9.0") {
			t.Errorf("verdict = %+v", v)
		}
	})
	t.Run("without its ConfigMap", func(t *testing.T) {
		cni, err := fakeClient(t, agentDS).DetectCNI(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if v := networking.CheckPlugin(*cni, nil); cni.Antrea() != nil || v.Status != networking.VerdictWarn || !strings.Contains(v.Message, "antrea-config") {
			t.Errorf("antrea = %+v, verdict = %+v", cni.Antrea(), v)
		}
	})
}
