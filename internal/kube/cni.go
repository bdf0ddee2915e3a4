package kube

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// CNI is the network plugin detected in the cluster (the networking
// package knows the plugins and judges them for Windows).
type CNI = networking.Plugin

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
func (c *Client) detectCNI(ctx context.Context, flannel *networking.FlannelConfig) (*CNI, error) {
	if flannel != nil {
		return &CNI{Name: networking.PluginFlannel, Source: "ConfigMap " + flannel.ConfigMap, Flannel: flannel}, nil
	}
	candidates := []struct{ name, namespace, daemonSet string }{
		{networking.PluginCalico, "calico-system", "calico-node"},
		{networking.PluginCalico, "kube-system", "calico-node"},
		{networking.PluginAntrea, "kube-system", "antrea-agent"},
	}
	for _, cand := range candidates {
		ds, err := c.AppsV1().DaemonSets(cand.namespace).Get(ctx, cand.daemonSet, metav1.GetOptions{})
		if err == nil {
			cni := &CNI{Name: cand.name, Source: "DaemonSet " + cand.namespace + "/" + cand.daemonSet}
			if cand.name == networking.PluginAntrea {
				if cni.Antrea, err = c.readAntreaConfig(ctx, ds); err != nil {
					return nil, err
				}
			}
			return cni, nil
		}
		if !absent(err) {
			return nil, fmt.Errorf("reading DaemonSet %s/%s: %w", cand.namespace, cand.daemonSet, err)
		}
	}
	return &CNI{Name: networking.PluginUnknown}, nil
}

// readAntreaConfig reads Antrea's agent configuration (ConfigMap
// kube-system/antrea-config, key antrea-agent.conf) and the release its
// Linux agents run (the antrea-agent container's image tag); nil when the
// ConfigMap is absent.
func (c *Client) readAntreaConfig(ctx context.Context, ds *appsv1.DaemonSet) (*networking.AntreaConfig, error) {
	cm, err := c.CoreV1().ConfigMaps(networking.AntreaNamespace).Get(ctx, networking.AntreaConfigMap, metav1.GetOptions{})
	if absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", networking.AntreaNamespace, networking.AntreaConfigMap, err)
	}
	cfg, err := networking.ParseAntreaAgentConf(cm.Data[networking.AntreaAgentConf])
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", networking.AntreaNamespace, networking.AntreaConfigMap, networking.AntreaAgentConf, err)
	}
	cfg.ConfigMap = networking.AntreaNamespace + "/" + networking.AntreaConfigMap
	for _, ctr := range ds.Spec.Template.Spec.Containers {
		if ctr.Name == networking.AntreaAgentName {
			cfg.Image, cfg.Version = ctr.Image, networking.AntreaImageVersion(ctr.Image)
		}
	}
	return cfg, nil
}

// findFlannelConfig reads flannel's ConfigMap; nil when flannel is not installed.
func (c *Client) findFlannelConfig(ctx context.Context) (*networking.FlannelConfig, error) {
	for _, ns := range networking.FlannelNamespaces {
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, networking.FlannelConfigMap, metav1.GetOptions{})
		if absent(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ns, networking.FlannelConfigMap, err)
		}
		cfg, err := networking.ParseFlannelNetConf(cm.Data[networking.FlannelNetConf])
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s key %s: %w", ns, networking.FlannelConfigMap, networking.FlannelNetConf, err)
		}
		cfg.ConfigMap = ns + "/" + networking.FlannelConfigMap
		return cfg, nil
	}
	return nil, nil
}
