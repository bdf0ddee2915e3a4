package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// CNI is the network plugin detected in the cluster (the networking
// package knows the plugins and judges them for Windows).
type CNI = networking.Plugin

// DetectCNI recognises the network plugin by the objects its standard
// manifests create: each networking mode reads its own plugin's
// (networking.Detect), through the client.
func (c *Client) DetectCNI(ctx context.Context) (*CNI, error) {
	return networking.Detect(ctx, clusterReader{c})
}

// clusterReader is the client as networking.ClusterReader: the few reads a
// mode's detection makes, absent objects as found = false.
type clusterReader struct{ c *Client }

func (r clusterReader) ConfigMap(ctx context.Context, namespace, name string) (map[string]string, bool, error) {
	cm, err := r.c.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if absent(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return cm.Data, true, nil
}

func (r clusterReader) DaemonSet(ctx context.Context, namespace, name string) (bool, error) {
	_, err := r.c.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if absent(err) {
		return false, nil
	}
	return err == nil, err
}

// Object reads a custom resource through a dynamic client made from the
// client's settings (or Client.Dynamic, which tests set); a resource the API server does not serve (its CRD not
// installed) is absent.
func (r clusterReader) Object(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (map[string]any, bool, error) {
	dc := r.c.Dynamic
	if dc == nil {
		var err error
		if dc, err = dynamic.NewForConfig(r.c.REST); err != nil {
			return nil, false, err
		}
	}
	var res dynamic.ResourceInterface = dc.Resource(gvr)
	if namespace != "" {
		res = dc.Resource(gvr).Namespace(namespace)
	}
	obj, err := res.Get(ctx, name, metav1.GetOptions{})
	if absent(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return obj.Object, true, nil
}

// Objects lists a cluster-scoped custom resource; NotFound (the resource
// not served) is served = false, any other error (Forbidden too) an error.
func (r clusterReader) Objects(ctx context.Context, gvr schema.GroupVersionResource) ([]map[string]any, bool, error) {
	dc := r.c.Dynamic
	if dc == nil {
		var err error
		if dc, err = dynamic.NewForConfig(r.c.REST); err != nil {
			return nil, false, err
		}
	}
	list, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := make([]map[string]any, 0, len(list.Items))
	for _, item := range list.Items {
		out = append(out, item.Object)
	}
	return out, true, nil
}
