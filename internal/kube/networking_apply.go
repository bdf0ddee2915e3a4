package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// networkingSelector selects every object windows_node_networking owns.
var networkingSelector = labels.SelectorFromSet(labels.Set{LabelManagedBy: FieldManager, LabelPartOf: NetworkingPartOf}).String()

// ApplyNetworking creates or updates every object of the spec by
// server-side apply under FieldManager (Force: these objects are the
// provider's, so a field someone changed is taken back), then removes
// objects of this resource that the spec no longer has (a mode change).
func (c *Client) ApplyNetworking(ctx context.Context, objs *NetworkingObjects) error {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	ns := objs.Spec.Namespace
	for _, a := range objs.agents {
		if _, err := c.CoreV1().ServiceAccounts(ns).Apply(ctx, a.ServiceAccount, opts); err != nil {
			return fmt.Errorf("applying ServiceAccount %s/%s: %w", ns, *a.ServiceAccount.Name, err)
		}
		if a.ClusterRole != nil {
			if _, err := c.RbacV1().ClusterRoles().Apply(ctx, a.ClusterRole, opts); err != nil {
				return fmt.Errorf("applying ClusterRole %s: %w", *a.ClusterRole.Name, err)
			}
		}
		if _, err := c.RbacV1().ClusterRoleBindings().Apply(ctx, a.ClusterRoleBinding, opts); err != nil {
			return fmt.Errorf("applying ClusterRoleBinding %s: %w", *a.ClusterRoleBinding.Name, err)
		}
		if _, err := c.CoreV1().ConfigMaps(ns).Apply(ctx, a.ConfigMap, opts); err != nil {
			return fmt.Errorf("applying ConfigMap %s/%s: %w", ns, *a.ConfigMap.Name, err)
		}
		if _, err := c.AppsV1().DaemonSets(ns).Apply(ctx, a.DaemonSet, opts); err != nil {
			return fmt.Errorf("applying DaemonSet %s/%s: %w", ns, *a.DaemonSet.Name, err)
		}
	}
	return c.deleteNetworkingObjects(ctx, ns, objs.names())
}

// names are the "Kind namespace/name" of every object of the set.
func (o *NetworkingObjects) names() map[string]bool {
	out := map[string]bool{}
	ns := o.Spec.Namespace
	for _, a := range o.agents {
		out["ServiceAccount "+ns+"/"+*a.ServiceAccount.Name] = true
		if a.ClusterRole != nil {
			out["ClusterRole "+*a.ClusterRole.Name] = true
		}
		out["ClusterRoleBinding "+*a.ClusterRoleBinding.Name] = true
		out["ConfigMap "+ns+"/"+*a.ConfigMap.Name] = true
		out["DaemonSet "+ns+"/"+*a.DaemonSet.Name] = true
	}
	return out
}

// Names lists the objects of the set, sorted.
func (o *NetworkingObjects) Names() []string {
	var out []string
	for n := range o.names() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NetworkingState is what the cluster holds of a networking spec.
type NetworkingState struct {
	// Drift lists the objects that are missing or whose fields this
	// provider owns differ from the spec ("DaemonSet kube-system/x: changed
	// outside Terraform"), sorted; empty when all is as applied.
	Drift []string
	// Agents is each agent's DaemonSet status: "<ready>/<desired> ready".
	Agents map[string]string
}

// ObserveNetworking compares the cluster with the spec: for each object,
// the fields FieldManager owns (client-go's Extract functions read them from
// managedFields) against what the spec applies. A field changed by someone
// else moves to their manager, so it shows up as drift too.
func (c *Client) ObserveNetworking(ctx context.Context, objs *NetworkingObjects) (*NetworkingState, error) {
	st := &NetworkingState{Agents: map[string]string{}}
	ns := objs.Spec.Namespace
	check := func(name string, want any, extract func() (any, error)) error {
		got, err := extract()
		if IsNotFound(err) {
			st.Drift = append(st.Drift, name+": missing")
			return nil
		}
		if err != nil {
			return err
		}
		if !sameApply(want, got) {
			st.Drift = append(st.Drift, name+": changed outside Terraform")
		}
		return nil
	}
	for _, a := range objs.agents {
		sa, cm, ds, crb := *a.ServiceAccount.Name, *a.ConfigMap.Name, *a.DaemonSet.Name, *a.ClusterRoleBinding.Name
		steps := []struct {
			name    string
			want    any
			extract func() (any, error)
		}{
			{"ServiceAccount " + ns + "/" + sa, a.ServiceAccount, func() (any, error) {
				o, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, sa, metav1.GetOptions{})
				if err != nil {
					return nil, notFoundOr(err, "ServiceAccount", ns+"/"+sa)
				}
				return corev1ac.ExtractServiceAccount(o, FieldManager)
			}},
			{"ClusterRoleBinding " + crb, a.ClusterRoleBinding, func() (any, error) {
				o, err := c.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{})
				if err != nil {
					return nil, notFoundOr(err, "ClusterRoleBinding", crb)
				}
				return rbacv1ac.ExtractClusterRoleBinding(o, FieldManager)
			}},
			{"ConfigMap " + ns + "/" + cm, a.ConfigMap, func() (any, error) {
				o, err := c.CoreV1().ConfigMaps(ns).Get(ctx, cm, metav1.GetOptions{})
				if err != nil {
					return nil, notFoundOr(err, "ConfigMap", ns+"/"+cm)
				}
				return corev1ac.ExtractConfigMap(o, FieldManager)
			}},
			{"DaemonSet " + ns + "/" + ds, a.DaemonSet, func() (any, error) {
				o, err := c.AppsV1().DaemonSets(ns).Get(ctx, ds, metav1.GetOptions{})
				if err != nil {
					return nil, notFoundOr(err, "DaemonSet", ns+"/"+ds)
				}
				st.Agents[a.Agent.Name] = daemonSetReady(o)
				return appsv1ac.ExtractDaemonSet(o, FieldManager)
			}},
		}
		if a.ClusterRole != nil {
			cr := *a.ClusterRole.Name
			steps = append(steps, struct {
				name    string
				want    any
				extract func() (any, error)
			}{"ClusterRole " + cr, a.ClusterRole, func() (any, error) {
				o, err := c.RbacV1().ClusterRoles().Get(ctx, cr, metav1.GetOptions{})
				if err != nil {
					return nil, notFoundOr(err, "ClusterRole", cr)
				}
				return rbacv1ac.ExtractClusterRole(o, FieldManager)
			}})
		}
		for _, s := range steps {
			if err := check(s.name, s.want, s.extract); err != nil {
				return nil, fmt.Errorf("reading %s: %w", s.name, err)
			}
		}
	}
	sort.Strings(st.Drift)
	return st, nil
}

func daemonSetReady(ds *appsv1.DaemonSet) string {
	return fmt.Sprintf("%d/%d ready", ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
}

// sameApply compares an apply configuration with one extracted from the
// cluster through JSON, where both have the same shape. The extracted one
// carries apiVersion/kind and may carry the status the server filled in
// for fields nobody applied; only what the spec sets is compared.
func sameApply(want, got any) bool {
	var w, g map[string]any
	wb, err1 := json.Marshal(want)
	gb, err2 := json.Marshal(got)
	if err1 != nil || err2 != nil || json.Unmarshal(wb, &w) != nil || json.Unmarshal(gb, &g) != nil {
		return false
	}
	for _, m := range []map[string]any{w, g} {
		delete(m, "apiVersion")
		delete(m, "kind")
		delete(m, "status")
	}
	return reflect.DeepEqual(w, g)
}

// DeleteNetworking removes every object windows_node_networking owns in the
// namespace (and its cluster-wide RBAC), found by label: DaemonSets first, so
// no agent runs without its credentials.
func (c *Client) DeleteNetworking(ctx context.Context, namespace string) error {
	return c.deleteNetworkingObjects(ctx, namespace, nil)
}

// deleteNetworkingObjects deletes the owned objects not in keep.
func (c *Client) deleteNetworkingObjects(ctx context.Context, ns string, keep map[string]bool) error {
	list := metav1.ListOptions{LabelSelector: networkingSelector}
	del := metav1.DeleteOptions{}
	var errs []error
	gone := func(kind, name string, err error) {
		if err != nil && !absent(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", kind, name, err))
		}
	}
	dss, err := c.AppsV1().DaemonSets(ns).List(ctx, list)
	if err != nil {
		return fmt.Errorf("listing DaemonSets in %s: %w", ns, err)
	}
	for _, o := range dss.Items {
		if !keep["DaemonSet "+ns+"/"+o.Name] {
			gone("DaemonSet", ns+"/"+o.Name, c.AppsV1().DaemonSets(ns).Delete(ctx, o.Name, del))
		}
	}
	cms, err := c.CoreV1().ConfigMaps(ns).List(ctx, list)
	if err != nil {
		return fmt.Errorf("listing ConfigMaps in %s: %w", ns, err)
	}
	for _, o := range cms.Items {
		if !keep["ConfigMap "+ns+"/"+o.Name] {
			gone("ConfigMap", ns+"/"+o.Name, c.CoreV1().ConfigMaps(ns).Delete(ctx, o.Name, del))
		}
	}
	crbs, err := c.RbacV1().ClusterRoleBindings().List(ctx, list)
	if err != nil {
		return fmt.Errorf("listing ClusterRoleBindings: %w", err)
	}
	for _, o := range crbs.Items {
		if !keep["ClusterRoleBinding "+o.Name] && bindsInto(o.Subjects, ns) {
			gone("ClusterRoleBinding", o.Name, c.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, del))
		}
	}
	crs, err := c.RbacV1().ClusterRoles().List(ctx, list)
	if err != nil {
		return fmt.Errorf("listing ClusterRoles: %w", err)
	}
	for _, o := range crs.Items {
		if !keep["ClusterRole "+o.Name] && strings.Contains(o.Name, ":"+ns+":") {
			gone("ClusterRole", o.Name, c.RbacV1().ClusterRoles().Delete(ctx, o.Name, del))
		}
	}
	sas, err := c.CoreV1().ServiceAccounts(ns).List(ctx, list)
	if err != nil {
		return fmt.Errorf("listing ServiceAccounts in %s: %w", ns, err)
	}
	for _, o := range sas.Items {
		if !keep["ServiceAccount "+ns+"/"+o.Name] {
			gone("ServiceAccount", ns+"/"+o.Name, c.CoreV1().ServiceAccounts(ns).Delete(ctx, o.Name, del))
		}
	}
	return errors.Join(errs...)
}

func bindsInto(subjects []rbacv1.Subject, ns string) bool {
	return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool { return s.Namespace == ns })
}

// ObservedNetworkingMode reads which mode's objects a namespace holds, for
// import and for a node's join: the name of the mode whose agents'
// DaemonSets exist, or networking.Default's when none do.
func (c *Client) ObservedNetworkingMode(ctx context.Context, namespace string) (string, error) {
	dss, err := c.AppsV1().DaemonSets(namespace).List(ctx, metav1.ListOptions{LabelSelector: networkingSelector})
	if err != nil {
		return "", fmt.Errorf("listing DaemonSets in %s: %w", namespace, err)
	}
	names := make([]string, 0, len(dss.Items))
	for _, ds := range dss.Items {
		names = append(names, ds.Name)
	}
	return networking.ByDaemonSets(names).Name(), nil
}

// WindowsNodeNames lists the Nodes labelled kubernetes.io/os=windows, sorted.
func (c *Client) WindowsNodeNames(ctx context.Context) ([]string, error) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelOS + "=windows"})
	if err != nil {
		return nil, fmt.Errorf("listing Windows nodes: %w", err)
	}
	names := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	return names, nil
}

// WindowsNodesDependError is the refusal to remove node networking while
// Windows nodes use it.
type WindowsNodesDependError struct {
	Nodes  []string
	Agents []Agent
}

func (e *WindowsNodesDependError) Error() string {
	var agents []string
	for _, a := range e.Agents {
		agents = append(agents, a.Name+" (DaemonSet "+a.DaemonSet+")")
	}
	return fmt.Sprintf("%d Windows node(s) still depend on it: %s. Removing %s would stop them on those nodes: "+
		"Services (ClusterIPs, NodePorts, and so cluster DNS) would stop working for their pods, and new pods there would get no network. "+
		"Destroy the windows_node resources first (Terraform does so when they reference this resource's id through networking_id), "+
		"or set allow_destroy_with_nodes = true to remove it anyway.",
		len(e.Nodes), strings.Join(e.Nodes, ", "), strings.Join(agents, " and "))
}
