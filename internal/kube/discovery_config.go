package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// kubeadmClusterConfiguration is the part of kubeadm's ClusterConfiguration
// (kube-system/kubeadm-config, key ClusterConfiguration) discovery reads. The
// fields have kept their names from v1beta1 to v1beta4.
type kubeadmClusterConfiguration struct {
	KubernetesVersion string `json:"kubernetesVersion"`
	Networking        struct {
		DNSDomain     string `json:"dnsDomain"`
		PodSubnet     string `json:"podSubnet"`
		ServiceSubnet string `json:"serviceSubnet"`
	} `json:"networking"`
}

// kubeletConfiguration is the part of the cluster-wide KubeletConfiguration
// (kube-system/kubelet-config, key kubelet) discovery reads.
type kubeletConfiguration struct {
	ClusterDomain string   `json:"clusterDomain"`
	ClusterDNS    []string `json:"clusterDNS"`
}

// kubeadmConfig reads kubeadm's ClusterConfiguration; nil when the cluster
// was not made by kubeadm.
func (c *Client) kubeadmConfig(ctx context.Context) (*kubeadmClusterConfiguration, error) {
	var cfg kubeadmClusterConfiguration
	found, err := c.configMapYAML(ctx, kubeadmConfigMap, "ClusterConfiguration", &cfg)
	if !found || err != nil {
		return nil, err
	}
	return &cfg, nil
}

// kubeletConfig reads the cluster-wide kubelet configuration kubeadm
// publishes; nil when there is none.
func (c *Client) kubeletConfig(ctx context.Context) (*kubeletConfiguration, error) {
	var cfg kubeletConfiguration
	found, err := c.configMapYAML(ctx, kubeletConfigMap, "kubelet", &cfg)
	if !found || err != nil {
		return nil, err
	}
	return &cfg, nil
}

// configMapYAML decodes one YAML key of a kube-system ConfigMap into out.
// found is false when the ConfigMap or the key does not exist (or RBAC hides
// it).
func (c *Client) configMapYAML(ctx context.Context, name, key string, out any) (found bool, _ error) {
	cm, err := c.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
	if absent(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading ConfigMap kube-system/%s: %w", name, err)
	}
	raw, ok := cm.Data[key]
	if !ok {
		return false, nil
	}
	if err := yaml.Unmarshal([]byte(raw), out); err != nil {
		return false, fmt.Errorf("decoding key %s of ConfigMap kube-system/%s: %w", key, name, err)
	}
	return true, nil
}
