package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// readCalicoConfig reads what decides whether Windows nodes can join the
// cluster's Calico: its IPPools, its IPAM configuration and Felix's
// cluster-wide configuration, from the Kubernetes datastore's CRDs
// (crd.projectcalico.org/v1) or, where only they are served,
// projectcalico.org/v3. nil when neither is served (Calico's pods exist but
// not its resources: an etcd datastore), so only its presence is judged.
func (c *Client) readCalicoConfig(ctx context.Context) (*networking.CalicoConfig, error) {
	dyn, err := c.dynamicClient()
	if err != nil {
		return nil, err
	}
	for _, api := range []struct{ group, version, ipam string }{
		{networking.CalicoCRDGroup, networking.CalicoCRDVersion, networking.CalicoIPAMConfigsV1},
		{networking.CalicoV3Group, networking.CalicoV3Version, networking.CalicoIPAMConfigurationsV3},
	} {
		gvr := func(resource string) schema.GroupVersionResource {
			return schema.GroupVersionResource{Group: api.group, Version: api.version, Resource: resource}
		}
		pools, err := dyn.Resource(gvr(networking.CalicoIPPools)).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue // the API group is not served
		}
		if err != nil {
			// Forbidden too: a check that cannot read the pools must not pass
			// a cluster it cannot judge (examples/rbac grants the reads).
			return nil, fmt.Errorf("listing Calico IPPools (%s): %w", api.group, err)
		}
		cfg := &networking.CalicoConfig{Group: api.group}
		for _, p := range pools.Items {
			pool := networking.CalicoPool{Name: p.GetName()}
			pool.CIDR, _, _ = unstructured.NestedString(p.Object, "spec", "cidr")
			pool.VXLANMode, _, _ = unstructured.NestedString(p.Object, "spec", "vxlanMode")
			pool.IPIPMode, _, _ = unstructured.NestedString(p.Object, "spec", "ipipMode")
			pool.Disabled, _, _ = unstructured.NestedBool(p.Object, "spec", "disabled")
			size, _, _ := unstructured.NestedInt64(p.Object, "spec", "blockSize")
			pool.BlockSize = int(size)
			cfg.Pools = append(cfg.Pools, pool)
		}
		ipam, err := dyn.Resource(gvr(api.ipam)).Get(ctx, networking.CalicoDefault, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading Calico's IPAM configuration %s/%s: %w", api.ipam, networking.CalicoDefault, err)
		default:
			cfg.IPAMConfigFound = true
			cfg.StrictAffinity, _, _ = unstructured.NestedBool(ipam.Object, "spec", "strictAffinity")
		}
		felix, err := dyn.Resource(gvr(networking.CalicoFelixConfigurations)).Get(ctx, networking.CalicoDefault, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading Calico's FelixConfiguration %s: %w", networking.CalicoDefault, err)
		default:
			vni, _, _ := unstructured.NestedInt64(felix.Object, "spec", "vxlanVNI")
			port, _, _ := unstructured.NestedInt64(felix.Object, "spec", "vxlanPort")
			cfg.VXLANVNI, cfg.VXLANPort = int(vni), int(port)
		}
		cfg.WithFelixDefaults()
		return cfg, nil
	}
	return nil, nil
}
