package kubeletsim

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// kubeletConfigGroupVersion is the only KubeletConfiguration version kubelet
// v1.36 reads.
const kubeletConfigGroupVersion = "kubelet.config.k8s.io/v1beta1"

// settings is the effective configuration: the --config file with the
// command-line flags taking precedence, as kubeletConfigFlagPrecedence does.
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
	StatusUpdateFrequency    string
	SystemReserved           map[string]string
	KubeReserved             map[string]string
	EvictionHard             map[string]string
	AuthenticationWebhook    bool
	AuthenticationAnonymous  bool
	ClientCAFile             string
	AuthorizationMode        string
}

// loadConfigFile decodes a KubeletConfiguration as the kubelet's codec does:
// apiVersion and kind must name the v1beta1 type; unknown fields only earn a
// warning (strict decoding fails, lenient decoding is used).
func loadConfigFile(files FileSystem, path string, log *logger) (*kubeletv1beta1.KubeletConfiguration, error) {
	data, err := files.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: failed to read kubelet config file %q, error: %w", path, path, err)
	}
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: failed to decode: %w", path, err)
	}
	switch {
	case meta.Kind == "":
		return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: failed to decode: Object 'Kind' is missing in '%s'", path, strings.TrimSpace(string(data)))
	case meta.APIVersion != kubeletConfigGroupVersion || meta.Kind != "KubeletConfiguration":
		return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: failed to decode: no kind %q is registered for version %q in scheme \"pkg/kubelet/apis/config/scheme/scheme.go:28\"", path, meta.Kind, meta.APIVersion)
	}
	kc := &kubeletv1beta1.KubeletConfiguration{}
	if err := yaml.UnmarshalStrict(data, kc); err != nil {
		log.Info("codec.go:105", "Using lenient decoding as strict decoding failed", "err", err)
		kc = &kubeletv1beta1.KubeletConfiguration{}
		if err := yaml.Unmarshal(data, kc); err != nil {
			return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: failed to decode: %w", path, err)
		}
	}
	return kc, nil
}

// effectiveSettings merges the configuration file (may be nil) and flags.
func effectiveSettings(kc *kubeletv1beta1.KubeletConfiguration, f *flags) settings {
	s := settings{
		ClusterDNS: f.ClusterDNS, ClusterDomain: f.ClusterDomain, MaxPods: f.MaxPods,
		ProviderID: f.ProviderID, RegisterWithTaints: f.RegisterWithTaints, RegisterNode: f.RegisterNode,
		ContainerRuntimeEndpoint: f.ContainerRuntimeEndpoint, ResolvConf: f.ResolvConf,
		LeaseDurationSeconds: 40, AuthenticationWebhook: true, AuthorizationMode: "Webhook",
	}
	if kc == nil {
		return s
	}
	fileFirst := func(flag string, apply func()) {
		if !f.changed(flag) {
			apply()
		}
	}
	fileFirst("cluster-dns", func() {
		if len(kc.ClusterDNS) > 0 {
			s.ClusterDNS = kc.ClusterDNS
		}
	})
	fileFirst("cluster-domain", func() { s.ClusterDomain = kc.ClusterDomain })
	fileFirst("max-pods", func() {
		if kc.MaxPods != 0 {
			s.MaxPods = kc.MaxPods
		}
	})
	fileFirst("provider-id", func() { s.ProviderID = kc.ProviderID })
	fileFirst("register-with-taints", func() {
		if len(kc.RegisterWithTaints) > 0 {
			s.RegisterWithTaints = kc.RegisterWithTaints
		}
	})
	fileFirst("register-node", func() {
		if kc.RegisterNode != nil {
			s.RegisterNode = *kc.RegisterNode
		}
	})
	fileFirst("container-runtime-endpoint", func() {
		if kc.ContainerRuntimeEndpoint != "" {
			s.ContainerRuntimeEndpoint = kc.ContainerRuntimeEndpoint
		}
	})
	fileFirst("resolv-conf", func() {
		if kc.ResolverConfig != nil {
			s.ResolvConf = *kc.ResolverConfig
		}
	})
	if kc.NodeLeaseDurationSeconds > 0 {
		s.LeaseDurationSeconds = kc.NodeLeaseDurationSeconds
	}
	s.SystemReserved, s.KubeReserved, s.EvictionHard = kc.SystemReserved, kc.KubeReserved, kc.EvictionHard
	if kc.Authentication.Webhook.Enabled != nil {
		s.AuthenticationWebhook = *kc.Authentication.Webhook.Enabled
	}
	if kc.Authentication.Anonymous.Enabled != nil {
		s.AuthenticationAnonymous = *kc.Authentication.Anonymous.Enabled
	}
	s.ClientCAFile = kc.Authentication.X509.ClientCAFile
	if kc.Authorization.Mode != "" {
		s.AuthorizationMode = string(kc.Authorization.Mode)
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

type kubeletConfigFile = kubeletv1beta1.KubeletConfiguration
