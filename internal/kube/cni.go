package kube

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Network plugins DetectCNI recognises.
const (
	CNIFlannel = "flannel"
	CNICalico  = "calico"
	CNIAntrea  = "antrea"
	CNIUnknown = "unknown"
)

// Where flannel keeps its configuration: the kube-flannel manifest uses the
// kube-flannel namespace, older manifests (and the Windows guides of that
// era) kube-system.
const (
	flannelConfigMap = "kube-flannel-cfg"
	flannelNetConf   = "net-conf.json"
)

var flannelNamespaces = []string{"kube-flannel", "kube-system"}

// Flannel's defaults when net-conf.json leaves them out (flannel
// pkg/subnet/config.go and pkg/backend/vxlan): no Backend means udp, a vxlan
// backend without VNI or Port uses VNI 1 on the Linux kernel's port 8472.
const (
	flannelDefaultBackend   = "udp"
	flannelDefaultVXLANVNI  = 1
	flannelDefaultVXLANPort = 8472
)

// Windows' overlay networking (HNS) only accepts VXLAN with these values, so
// a flannel overlay that Windows nodes join must use them cluster-wide.
const (
	WindowsVXLANVNI  = 4096
	WindowsVXLANPort = 4789
)

// CNI is the network plugin detected in the cluster.
type CNI struct {
	// Name is one of CNIFlannel, CNICalico, CNIAntrea or CNIUnknown.
	Name string
	// Source names the object the plugin was recognised by.
	Source string
	// Flannel is flannel's configuration; nil for other plugins.
	Flannel *FlannelConfig
}

// FlannelConfig is flannel's net-conf.json with flannel's defaults applied.
type FlannelConfig struct {
	// ConfigMap is "<namespace>/kube-flannel-cfg".
	ConfigMap   string
	Network     string
	IPv6Network string
	// Backend is the backend type: vxlan, host-gw, udp, wireguard, ...
	Backend string
	// VNI and Port are the VXLAN settings; 0 for other backends.
	VNI  int
	Port int
}

// Networks lists the pod networks flannel hands out subnets from.
func (f *FlannelConfig) Networks() []string {
	var out []string
	for _, n := range []string{f.Network, f.IPv6Network} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// DetectCNI recognises the network plugin by the objects its standard
// manifests create: flannel's ConfigMap, Calico's calico-node DaemonSet,
// Antrea's antrea-agent DaemonSet.
func (c *Client) DetectCNI(ctx context.Context) (*CNI, error) {
	flannel, err := c.findFlannelConfig(ctx)
	if err != nil {
		return nil, err
	}
	return c.detectCNI(ctx, flannel)
}

// detectCNI is DetectCNI with flannel's configuration already read (nil
// when flannel is not installed).
func (c *Client) detectCNI(ctx context.Context, flannel *FlannelConfig) (*CNI, error) {
	if flannel != nil {
		return &CNI{Name: CNIFlannel, Source: "ConfigMap " + flannel.ConfigMap, Flannel: flannel}, nil
	}
	candidates := []struct{ name, namespace, daemonSet string }{
		{CNICalico, "calico-system", "calico-node"},
		{CNICalico, "kube-system", "calico-node"},
		{CNIAntrea, "kube-system", "antrea-agent"},
	}
	for _, cand := range candidates {
		_, err := c.AppsV1().DaemonSets(cand.namespace).Get(ctx, cand.daemonSet, metav1.GetOptions{})
		if err == nil {
			return &CNI{Name: cand.name, Source: "DaemonSet " + cand.namespace + "/" + cand.daemonSet}, nil
		}
		if !absent(err) {
			return nil, fmt.Errorf("reading DaemonSet %s/%s: %w", cand.namespace, cand.daemonSet, err)
		}
	}
	return &CNI{Name: CNIUnknown}, nil
}

// findFlannelConfig reads flannel's ConfigMap; nil when flannel is not installed.
func (c *Client) findFlannelConfig(ctx context.Context) (*FlannelConfig, error) {
	for _, ns := range flannelNamespaces {
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, flannelConfigMap, metav1.GetOptions{})
		if absent(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ns, flannelConfigMap, err)
		}
		cfg, err := ParseFlannelNetConf(cm.Data[flannelNetConf])
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", ns, flannelConfigMap, flannelNetConf, err)
		}
		cfg.ConfigMap = ns + "/" + flannelConfigMap
		return cfg, nil
	}
	return nil, nil
}

// ParseFlannelNetConf parses flannel's net-conf.json and fills in the
// defaults flannel itself would use.
func ParseFlannelNetConf(raw string) (*FlannelConfig, error) {
	var conf struct {
		Network     string
		IPv6Network string
		Backend     *struct {
			Type string
			VNI  *int
			Port *int
		}
	}
	if raw == "" {
		return nil, fmt.Errorf("%s is empty", flannelNetConf)
	}
	if err := json.Unmarshal([]byte(raw), &conf); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", flannelNetConf, err)
	}
	cfg := &FlannelConfig{Network: conf.Network, IPv6Network: conf.IPv6Network, Backend: flannelDefaultBackend}
	if conf.Backend != nil && conf.Backend.Type != "" {
		cfg.Backend = conf.Backend.Type
	}
	if cfg.Backend == "vxlan" {
		cfg.VNI, cfg.Port = flannelDefaultVXLANVNI, flannelDefaultVXLANPort
		if conf.Backend.VNI != nil {
			cfg.VNI = *conf.Backend.VNI
		}
		if conf.Backend.Port != nil {
			cfg.Port = *conf.Backend.Port
		}
	}
	return cfg, nil
}
