package kube

import (
	"context"
	"fmt"

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
		_, err := c.AppsV1().DaemonSets(cand.namespace).Get(ctx, cand.daemonSet, metav1.GetOptions{})
		if err == nil {
			cni := &CNI{Name: cand.name, Source: "DaemonSet " + cand.namespace + "/" + cand.daemonSet}
			if cand.name == networking.PluginCalico {
				if cni.Calico, err = c.readCalicoConfig(ctx); err != nil {
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
