package linuxnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"
)

// Antrea is the Linux side of Antrea the sandbox can run on its control-plane
// node, as Antrea's release manifest (antrea-io/antrea build/yamls/antrea.yml)
// installs it: ConfigMap kube-system/antrea-config (the agents'
// antrea-agent.conf), the antrea-agent ServiceAccount with its ClusterRole
// and binding (which the Windows agents run as, upstream), and the Linux
// DaemonSet antrea-agent, whose pod on this node the node reports Running as
// its kubelet would. Antrea's controller, its CRDs and APIServices are not
// installed: nothing in the sandbox serves them, and the simulated Windows
// agent does not reach for them.
type Antrea struct {
	// Version is the release the Linux agents run (the image tag:
	// "v2.2.0").
	Version string
	// TrafficEncapMode, TunnelType and TrafficEncryptionMode are written into
	// antrea-agent.conf as given; "" leaves the line out (Antrea's
	// defaults: encap, geneve, none).
	TrafficEncapMode, TunnelType, TrafficEncryptionMode string
}

// Names of Antrea's Linux objects (antrea.yml).
const (
	AntreaNamespace   = metav1.NamespaceSystem
	AntreaConfigMap   = "antrea-config"
	AntreaAgent       = "antrea-agent" // DaemonSet, ServiceAccount, ClusterRole and its binding
	antreaMACKey      = "node.antrea.io/mac-address"
	antreaLinuxMAC    = "02:42:ac:11:00:02"
	antreaLabelApp    = "antrea"
	antreaAgentImage  = "antrea/antrea-agent-ubuntu"
	antreaComponent   = "component"
	antreaAgentLabels = "app=antrea,component=antrea-agent"
)

// AntreaClusterRoleRules are the rules of antrea.yml's ClusterRole
// antrea-agent that an agent on a Windows node uses (Node, Pod, Service,
// EndpointSlice and Namespace reads; the Node's annotations through
// nodes/status; its pods' status; events), as the manifest words them.
// Rules for Antrea's own API groups (controlplane.antrea.io, crd.antrea.io,
// stats.antrea.io) are left out: the sandbox serves none of them.
var AntreaClusterRoleRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "watch", "list"}},
	{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "watch", "list"}},
	{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "namespaces"}, Verbs: []string{"get", "watch", "list"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "watch", "list"}},
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"extension-apiserver-authentication"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"antrea-ca"}, Verbs: []string{"get", "watch", "list"}},
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
}

// AgentConf renders antrea-agent.conf with a's settings (the keys of
// build/charts/antrea/conf/antrea-agent.conf).
func (a Antrea) AgentConf() string {
	var b strings.Builder
	b.WriteString("# antrea-agent.conf of the sandbox's Antrea (keys of antrea-io/antrea build/charts/antrea/conf/antrea-agent.conf)\nfeatureGates:\n")
	for _, kv := range [][2]string{{"trafficEncapMode", a.TrafficEncapMode}, {"tunnelType", a.TunnelType}, {"trafficEncryptionMode", a.TrafficEncryptionMode}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %q\n", kv[0], kv[1])
		}
	}
	b.WriteString("antreaProxy:\n  enable: true\n  proxyAll: false\n")
	return b.String()
}

// supportsNoEncap is pkg/agent/config TrafficEncapModeType.SupportsNoEncap:
// noEncap, hybrid and networkPolicyOnly.
func (a Antrea) supportsNoEncap() bool {
	switch strings.ToLower(a.TrafficEncapMode) {
	case "noencap", "hybrid", "networkpolicyonly":
		return true
	}
	return false
}

// InstallAntrea installs Antrea's Linux side (Antrea) and returns what
// removes it again; the node reports the Linux agent's pod Running until
// then. A mode that supports noEncap also gets the node's
// node.antrea.io/mac-address annotation, which the Linux agent writes
// (pkg/agent/agent.go: "As a mixture of Linux and Windows nodes is
// possible, Linux Nodes' MAC addresses should be reported too") and
// Windows agents route by in noEncap.
func (n *Node) InstallAntrea(ctx context.Context, a Antrea) (remove func(context.Context) error, err error) {
	if a.Version == "" {
		return nil, errors.New("linuxnode: Antrea needs a Version (the image tag its agents run)")
	}
	labels := map[string]string{"app": antreaLabelApp}
	agentLabels := map[string]string{"app": antreaLabelApp, antreaComponent: AntreaAgent}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: AntreaConfigMap, Namespace: AntreaNamespace, Labels: labels},
		Data: map[string]string{"antrea-agent.conf": a.AgentConf(), "antrea-controller.conf": "featureGates:\n"}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: AntreaAgent, Namespace: AntreaNamespace, Labels: labels}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: AntreaAgent, Labels: labels}, Rules: AntreaClusterRoleRules}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: AntreaAgent, Labels: labels},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AntreaAgent},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: AntreaAgent, Namespace: AntreaNamespace}}}
	image := antreaAgentImage + ":" + a.Version
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: AntreaAgent, Namespace: AntreaNamespace, Labels: agentLabels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: agentLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: agentLabels},
				Spec: corev1.PodSpec{
					HostNetwork: true, PriorityClassName: "system-node-critical", ServiceAccountName: AntreaAgent,
					NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Effect: corev1.TaintEffectNoSchedule, Operator: corev1.TolerationOpExists},
						{Effect: corev1.TaintEffectNoExecute, Operator: corev1.TolerationOpExists},
					},
					InitContainers: []corev1.Container{{Name: "install-cni", Image: image, Command: []string{"install_cni"}}},
					Containers: []corev1.Container{
						{Name: AntreaAgent, Image: image, Command: []string{"antrea-agent"}, Args: []string{"--config=/etc/antrea/antrea-agent.conf"}},
						{Name: "antrea-ovs", Image: image, Command: []string{"start_ovs"}},
					},
				},
			},
		},
	}
	removeAll := func(ctx context.Context) error {
		var errs []error
		keep := func(err error) {
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
		keep(n.client.AppsV1().DaemonSets(AntreaNamespace).Delete(ctx, AntreaAgent, metav1.DeleteOptions{}))
		keep(n.client.RbacV1().ClusterRoleBindings().Delete(ctx, AntreaAgent, metav1.DeleteOptions{}))
		keep(n.client.RbacV1().ClusterRoles().Delete(ctx, AntreaAgent, metav1.DeleteOptions{}))
		keep(n.client.CoreV1().ServiceAccounts(AntreaNamespace).Delete(ctx, AntreaAgent, metav1.DeleteOptions{}))
		keep(n.client.CoreV1().ConfigMaps(AntreaNamespace).Delete(ctx, AntreaConfigMap, metav1.DeleteOptions{}))
		keep(n.annotate(ctx, nil))
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			_ = removeAll(context.WithoutCancel(ctx))
		}
	}()
	if _, err := n.client.CoreV1().ConfigMaps(AntreaNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("linuxnode: Antrea's ConfigMap: %w", err)
	}
	if _, err := n.client.CoreV1().ServiceAccounts(AntreaNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("linuxnode: Antrea's ServiceAccount: %w", err)
	}
	if _, err := n.client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("linuxnode: Antrea's ClusterRole: %w", err)
	}
	if _, err := n.client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("linuxnode: Antrea's ClusterRoleBinding: %w", err)
	}
	if a.supportsNoEncap() {
		mac := antreaLinuxMAC
		if err := n.annotate(ctx, &mac); err != nil {
			return nil, fmt.Errorf("linuxnode: Antrea's MAC annotation: %w", err)
		}
	}
	// The pod's watch starts before the DaemonSet, so its pod is never missed.
	w, err := n.client.CoreV1().Pods(AntreaNamespace).Watch(ctx, metav1.ListOptions{
		LabelSelector: antreaAgentLabels, FieldSelector: "spec.nodeName=" + NodeName})
	if err != nil {
		return nil, fmt.Errorf("linuxnode: watching Antrea's pods: %w", err)
	}
	if _, err := n.client.AppsV1().DaemonSets(AntreaNamespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		w.Stop()
		return nil, fmt.Errorf("linuxnode: Antrea's DaemonSet: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.runPods(runCtx, w)
	}()
	n.logf("linuxnode: Antrea %s installed (trafficEncapMode %q, tunnelType %q, trafficEncryptionMode %q)", a.Version, a.TrafficEncapMode, a.TunnelType, a.TrafficEncryptionMode)
	return func(ctx context.Context) error {
		cancel()
		w.Stop()
		<-done
		return removeAll(ctx)
	}, nil
}

// annotate sets (mac non-nil) or removes the node's Antrea MAC annotation
// through nodes/status, as the agent's patchNodeAnnotations does.
func (n *Node) annotate(ctx context.Context, mac *string) error {
	var v any
	if mac != nil {
		v = *mac
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{antreaMACKey: v}}})
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		_, err := n.client.CoreV1().Nodes().Patch(ctx, NodeName, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
}

// runPods is this node's kubelet for the DaemonSet's pods the watch sees:
// each is reported Running and Ready (hostNetwork: the node's address).
func (n *Node) runPods(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod || (ev.Type != watch.Added && ev.Type != watch.Modified) || pod.DeletionTimestamp != nil || podReady(pod) {
				continue
			}
			if err := n.reportRunning(ctx, pod); err != nil && ctx.Err() == nil {
				n.logf("linuxnode: reporting pod %s/%s Running: %v", pod.Namespace, pod.Name, err)
			}
		}
	}
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (n *Node) reportRunning(ctx context.Context, pod *corev1.Pod) error {
	now := metav1.Now()
	st := corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}}})
	}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	pods := n.client.CoreV1().Pods(pod.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = st
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// RestartAntreaAgent is `kubectl -n kube-system rollout restart daemonset
// antrea-agent` for this node's Linux agent: it starts again with
// antrea-config as it is now, and writes or removes the node's
// node.antrea.io/mac-address annotation for the traffic mode it reads
// (pkg/agent/agent.go: the MAC is reported in the modes that support
// noEncap). Antrea's documentation asks for this restart after a change of
// the traffic mode (docs/noencap-hybrid-modes.md).
func (n *Node) RestartAntreaAgent(ctx context.Context) error {
	cm, err := n.client.CoreV1().ConfigMaps(AntreaNamespace).Get(ctx, AntreaConfigMap, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("linuxnode: Antrea's agent reads %s/%s: %w", AntreaNamespace, AntreaConfigMap, err)
	}
	var conf struct {
		TrafficEncapMode string `json:"trafficEncapMode"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["antrea-agent.conf"]), &conf); err != nil {
		return fmt.Errorf("linuxnode: Antrea's agent cannot parse antrea-agent.conf: %w", err)
	}
	if (Antrea{TrafficEncapMode: conf.TrafficEncapMode}).supportsNoEncap() {
		mac := antreaLinuxMAC
		return n.annotate(ctx, &mac)
	}
	return n.annotate(ctx, nil)
}
