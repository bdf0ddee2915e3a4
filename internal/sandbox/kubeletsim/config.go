package kubeletsim

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// settings is the part of the effective KubeletConfiguration (defaults, the
// --config file, flags over the file: all decided by kubeletcheck with the
// kubelet's own loader and precedence) that the simulator acts on.
type settings struct {
	ClusterDNS               []string
	ClusterDomain            string
	MaxPods                  int32
	ProviderID               string
	RegisterWithTaints       []corev1.Taint
	RegisterNode             bool
	ContainerRuntimeEndpoint string
	ResolvConf               string
	LeaseDurationSeconds     int32
	SystemReserved           map[string]string
	KubeReserved             map[string]string
	EvictionHard             map[string]string
	ClientCAFile             string
}

func settingsFrom(kc *kubeletv1beta1.KubeletConfiguration) settings {
	s := settings{
		ClusterDNS: kc.ClusterDNS, ClusterDomain: kc.ClusterDomain, MaxPods: kc.MaxPods,
		ProviderID: kc.ProviderID, RegisterWithTaints: kc.RegisterWithTaints, RegisterNode: true,
		ContainerRuntimeEndpoint: kc.ContainerRuntimeEndpoint,
		LeaseDurationSeconds:     kc.NodeLeaseDurationSeconds,
		SystemReserved:           kc.SystemReserved, KubeReserved: kc.KubeReserved, EvictionHard: kc.EvictionHard,
		ClientCAFile: kc.Authentication.X509.ClientCAFile,
	}
	if kc.RegisterNode != nil {
		s.RegisterNode = *kc.RegisterNode
	}
	if kc.ResolverConfig != nil {
		s.ResolvConf = *kc.ResolverConfig
	}
	return s
}

// reserved sums the memory or cpu a configuration keeps from pods.
func (s settings) reserved(name corev1.ResourceName) resource.Quantity {
	var q resource.Quantity
	for _, m := range []map[string]string{s.SystemReserved, s.KubeReserved} {
		if v, ok := m[string(name)]; ok {
			if r, err := resource.ParseQuantity(v); err == nil {
				q.Add(r)
			}
		}
	}
	if name == corev1.ResourceMemory {
		if v, ok := s.EvictionHard["memory.available"]; ok && !strings.HasSuffix(v, "%") {
			if r, err := resource.ParseQuantity(v); err == nil {
				q.Add(r)
			}
		}
	}
	return q
}
