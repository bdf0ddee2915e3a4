package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// byRBAC marks a refusal that is a missing permission (RBAC, before any
// admission): the everyday role does not grant the verb at all.
const byRBAC = ""

// byValidation marks a refusal by the API server's own validation, which
// runs before admission policies (422 Invalid).
const byValidation = "validation"

// TestAdmissionPolicies reads the documented everyday role as an attacker
// holding the provider's token would, against the sandbox's API server,
// which enforces the manifest's admission policies: every escalation found
// (issue 34) is refused, by the missing permission or by the policy it
// names, and every call the provider makes (through its own code) still
// succeeds. The writes are dry runs where one would do harm if admitted.
func TestAdmissionPolicies(t *testing.T) {
	s, admin := cluster(t)
	ctx := t.Context()
	provider, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{s.ProviderKubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	dryRun := []string{metav1.DryRunAll}

	// Someone else's objects: what an attacker would aim at.
	unrelated := mustCreate(t, admin.CoreV1().Secrets("kube-system").Create, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "tpw-policy-unrelated-" + suffix},
		Data:       map[string][]byte{"password": []byte("not for the provider")},
	})
	t.Cleanup(func() {
		_ = admin.CoreV1().Secrets("kube-system").Delete(context.Background(), unrelated.Name, metav1.DeleteOptions{})
	})
	// kubeadm's own token: a bootstrap token Secret without the provider's label.
	kubeadmID := "k" + suffix[:5]
	for len(kubeadmID) < 6 {
		kubeadmID += "0"
	}
	kubeadmToken := mustCreate(t, admin.CoreV1().Secrets("kube-system").Create, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + kubeadmID},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{"token-id": kubeadmID, "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true"},
	})
	t.Cleanup(func() {
		_ = admin.CoreV1().Secrets("kube-system").Delete(context.Background(), kubeadmToken.Name, metav1.DeleteOptions{})
	})

	ns := mustCreate(t, admin.CoreV1().Namespaces().Create, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tpw-policies-" + suffix}})
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	other := mustCreate(t, admin.AppsV1().DaemonSets(ns.Name).Create, daemonSet("node-exporter", nil))
	// windows_node_networking's own agent and start script, as an
	// administrator's apply leaves them.
	own := mustCreate(t, admin.AppsV1().DaemonSets(ns.Name).Create, daemonSet("kube-proxy-windows", map[string]string{
		kube.LabelManagedBy: kube.FieldManager, kube.LabelPartOf: kube.NetworkingPartOf,
	}))
	startScript := mustCreate(t, admin.CoreV1().ConfigMaps(ns.Name).Create, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-windows", Labels: map[string]string{kube.LabelManagedBy: kube.FieldManager}},
		Data:       map[string]string{"run-script.ps1": "Write-Output agent"},
	})
	bindingName := "windows-node-networking:" + ns.Name + ":kube-proxy-windows"
	binding := mustCreate(t, admin.RbacV1().ClusterRoleBindings().Create, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bindingName, Labels: map[string]string{kube.LabelManagedBy: kube.FieldManager}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-proxier"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "kube-proxy-windows", Namespace: ns.Name}},
	})
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})

	linux := mustCreate(t, admin.CoreV1().Nodes().Create, node("tpw-policy-linux-"+suffix, "linux"))
	windows := mustCreate(t, admin.CoreV1().Nodes().Create, node("tpw-policy-windows-"+suffix, "windows"))
	elsewhere := node("tpw-policy-aws-"+suffix, "windows")
	elsewhere.Spec.ProviderID = "aws:///us-east-1a/i-0123456789abcdef0"
	elsewhere = mustCreate(t, admin.CoreV1().Nodes().Create, elsewhere)
	managed := node("tpw-policy-capi-"+suffix, "windows")
	managed.Labels[kube.LabelManagedBy] = "cluster-api"
	managed = mustCreate(t, admin.CoreV1().Nodes().Create, managed)
	flannelled := node("tpw-policy-flannel-"+suffix, "windows")
	flannelled.Annotations = map[string]string{"flannel.alpha.coreos.com/public-ip": "10.0.0.21"}
	flannelled = mustCreate(t, admin.CoreV1().Nodes().Create, flannelled)
	for _, n := range []string{linux.Name, windows.Name, elsewhere.Name, managed.Name, flannelled.Name} {
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}) })
	}
	nodePatch := func(name, patch string) func() error {
		return func() error {
			_, err := provider.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{DryRun: dryRun})
			return err
		}
	}

	// The privileged Linux pod the first attack applied as
	// kube-system/kube-proxy-windows.
	privileged := func(name, namespace string) *appsv1.DaemonSet {
		ds := daemonSet(name, map[string]string{kube.LabelManagedBy: kube.FieldManager, kube.LabelPartOf: kube.NetworkingPartOf})
		ds.Namespace = namespace
		yes := true
		ds.Spec.Template.Spec.NodeSelector = map[string]string{kube.LabelOS: "linux"}
		ds.Spec.Template.Spec.HostPID, ds.Spec.Template.Spec.HostNetwork = true, true
		ds.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		ds.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		return ds
	}
	mergePatch := metav1.PatchOptions{}
	refusals := []struct {
		name, by string
		call     func() error
	}{
		// Cluster admin in one call: the networking agents, their start
		// scripts and RBAC are an administrator's, the everyday role writes
		// none of them.
		{"create kube-proxy-windows as a privileged Linux pod", byRBAC, func() error {
			_, err := provider.AppsV1().DaemonSets("kube-system").Create(ctx, privileged("kube-proxy-windows", "kube-system"), metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		{"server-side apply kube-proxy-windows as a privileged Linux pod", byRBAC, func() error {
			yes := true
			cfg := appsv1ac.DaemonSet("kube-proxy-windows", "kube-system").WithSpec(appsv1ac.DaemonSetSpec().
				WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().WithHostPID(true).
					WithNodeSelector(map[string]string{kube.LabelOS: "linux"}).
					WithContainers(corev1ac.Container().WithName("agent").WithImage("evil.example/root:1").
						WithSecurityContext(corev1ac.SecurityContext().WithPrivileged(yes))))))
			_, err := provider.AppsV1().DaemonSets("kube-system").Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: kube.FieldManager, Force: true, DryRun: dryRun})
			return err
		}},
		{"update its own networking DaemonSet's pod template", byRBAC, func() error {
			ds := privileged(own.Name, own.Namespace)
			ds.ResourceVersion = own.ResourceVersion
			_, err := provider.AppsV1().DaemonSets(ns.Name).Update(ctx, ds, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}},
		{"edit the agents' start script (ConfigMap)", byRBAC, func() error {
			_, err := provider.CoreV1().ConfigMaps(ns.Name).Patch(ctx, startScript.Name, types.MergePatchType,
				[]byte(`{"data":{"run-script.ps1":"net user evil /add"}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}},
		// Every policy bypassed by rebinding: no RBAC write at all.
		{"rebind kube-proxy's binding to system:bootstrappers", byRBAC, func() error {
			_, err := provider.RbacV1().ClusterRoleBindings().Patch(ctx, binding.Name, types.MergePatchType,
				[]byte(`{"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:bootstrappers"}]}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}},
		{"bind its own ClusterRole to system:bootstrappers", byRBAC, func() error {
			_, err := provider.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "windows-node-networking:kube-system:flannel-windows"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "terraform-provider-windows"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:bootstrappers"}},
			}, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		{"bind system:node-proxier to system:unauthenticated", byRBAC, func() error {
			_, err := provider.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "windows-node-networking:kube-system:kube-proxy-windows"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-proxier"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:unauthenticated"}},
			}, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		{"create flannel's ClusterRole with any rules", byRBAC, func() error {
			_, err := provider.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
				ObjectMeta: metav1.ObjectMeta{Name: "windows-node-networking:kube-system:flannel-windows"},
				Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}}},
			}, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		// Steering workloads through a DaemonSet's nodeSelector or a RuntimeClass.
		{"take another DaemonSet off every node (its nodeSelector)", byRBAC, func() error {
			_, err := provider.AppsV1().DaemonSets(other.Namespace).Patch(ctx, other.Name, types.StrategicMergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"nodeSelector":{"example.com/none":"x"}}}}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}},
		{"create a RuntimeClass", byRBAC, func() error {
			_, err := provider.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
				ObjectMeta: metav1.ObjectMeta{Name: "tpw-policy-rc-" + suffix, Labels: map[string]string{kube.LabelManagedBy: kube.FieldManager}},
				Handler:    "runhcs-wcow-process",
			}, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		// Secrets: its bootstrap tokens only, for joining only.
		{"create a service-account-token Secret for a powerful ServiceAccount", rbac.PolicySecrets, func() error {
			_, err := provider.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "tpw-escalate",
					Annotations: map[string]string{corev1.ServiceAccountNameKey: "clusterrole-aggregation-controller"}},
				Type: corev1.SecretTypeServiceAccountToken,
			}, metav1.CreateOptions{})
			return err
		}},
		{"create a service-account-token Secret named and labelled like a bootstrap token", rbac.PolicySecrets, func() error {
			_, err := provider.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-zzzzzz", Labels: map[string]string{kube.LabelManagedBy: kube.FieldManager},
					Annotations: map[string]string{corev1.ServiceAccountNameKey: "clusterrole-aggregation-controller"}},
				Type: corev1.SecretTypeServiceAccountToken,
			}, metav1.CreateOptions{})
			return err
		}},
		{"patch an unrelated Secret (the response would carry it whole)", rbac.PolicySecrets, func() error {
			got, err := provider.CoreV1().Secrets("kube-system").Patch(ctx, unrelated.Name, types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"x":"y"}}}`), mergePatch)
			if got != nil && len(got.Data) > 0 {
				t.Errorf("the refused patch returned the Secret's data")
			}
			return err
		}},
		{"patch an unrelated Secret into a labelled bootstrap token", rbac.PolicySecrets, func() error {
			_, err := provider.CoreV1().Secrets("kube-system").Patch(ctx, unrelated.Name, types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"terraform-provider-windows"}}}`), mergePatch)
			return err
		}},
		{"delete an unrelated Secret", rbac.PolicySecrets, func() error {
			return provider.CoreV1().Secrets("kube-system").Delete(ctx, unrelated.Name, metav1.DeleteOptions{})
		}},
		{"refresh (patch) kubeadm's bootstrap token", rbac.PolicySecrets, func() error {
			return provider.RefreshBootstrapToken(ctx, kubeadmID, time.Hour)
		}},
		{"delete kubeadm's bootstrap token", rbac.PolicySecrets, func() error {
			return provider.DeleteBootstrapToken(ctx, kubeadmID)
		}},
		{"create a bootstrap token in another group (system:bootstrappers alone)", rbac.PolicySecrets, func() error {
			return createToken(ctx, provider, "y"+kubeadmID[1:], map[string]string{"auth-extra-groups": "system:bootstrappers:elsewhere"})
		}},
		{"create a bootstrap token usable for signing", rbac.PolicySecrets, func() error {
			return createToken(ctx, provider, "y"+kubeadmID[1:], map[string]string{"usage-bootstrap-signing": "true"})
		}},
		{"create a bootstrap token that never expires", rbac.PolicySecrets, func() error {
			return createToken(ctx, provider, "y"+kubeadmID[1:], map[string]string{"expiration": ""})
		}},
		// Nodes: only Windows Nodes of its own, only its own keys.
		{"delete a Linux Node", rbac.PolicyNodes, func() error { return provider.DeleteNode(ctx, linux.Name) }},
		{"cordon a Linux Node", rbac.PolicyNodes, func() error { return provider.CordonNode(ctx, linux.Name, true) }},
		{"cordon a Node of another infrastructure (aws://)", rbac.PolicyNodes, nodePatch(elsewhere.Name, `{"spec":{"unschedulable":true}}`)},
		{"delete a Node another tool manages", rbac.PolicyNodes, func() error {
			return provider.CoreV1().Nodes().Delete(ctx, managed.Name, metav1.DeleteOptions{DryRun: dryRun})
		}},
		{"relabel a Windows Node as Linux", rbac.PolicyNodes, nodePatch(windows.Name, `{"metadata":{"labels":{"kubernetes.io/os":"linux"}}}`)},
		{"set a node-restriction.kubernetes.io label", rbac.PolicyNodes, nodePatch(windows.Name, `{"metadata":{"labels":{"node-restriction.kubernetes.io/secure":"true"}}}`)},
		{"set a node-role.kubernetes.io label", rbac.PolicyNodes, nodePatch(windows.Name, `{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}}`)},
		{"claim the Node for another manager", rbac.PolicyNodes, nodePatch(windows.Name, `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"cluster-api"}}}`)},
		{"add a node.kubernetes.io taint", rbac.PolicyNodes, nodePatch(windows.Name, `{"spec":{"taints":[{"key":"node.kubernetes.io/out-of-service","effect":"NoExecute"}]}}`)},
		{"rewrite flannel's public-ip annotation", rbac.PolicyNodes, nodePatch(flannelled.Name, `{"metadata":{"annotations":{"flannel.alpha.coreos.com/public-ip":"192.0.2.66"}}}`)},
		{"add flannel's backend-data annotation", rbac.PolicyNodes, nodePatch(windows.Name, `{"metadata":{"annotations":{"flannel.alpha.coreos.com/backend-data":"{\"VNI\":4096}"}}}`)},
		// The sandbox's node IPAM gives every Node a pod CIDR at once, which
		// validation then holds; the policy holds the one before (none).
		{"change a Node's pod CIDR", byValidation, nodePatch(windows.Name, `{"spec":{"podCIDR":"192.0.2.0/24","podCIDRs":["192.0.2.0/24"]}}`)},
		{"set a providerID of another infrastructure", rbac.PolicyNodes, nodePatch(windows.Name, `{"spec":{"providerID":"aws:///us-east-1a/i-0123"}}`)},
		{"give a Node a finalizer", rbac.PolicyNodes, nodePatch(windows.Name, `{"metadata":{"finalizers":["example.com/block"]}}`)},
		{"patch a Windows Node's status", byRBAC, func() error {
			_, err := provider.CoreV1().Nodes().Patch(ctx, windows.Name, types.MergePatchType,
				[]byte(`{"status":{"capacity":{"example.com/fake":"1"}}}`), mergePatch, "status")
			return err
		}},
		{"create a Node", byRBAC, func() error {
			_, err := provider.CoreV1().Nodes().Create(ctx, node("tpw-policy-new-"+suffix, "windows"), metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
	}
	for _, r := range refusals {
		t.Run("refused/"+r.name, func(t *testing.T) {
			err := r.call()
			if r.by == byValidation {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("%v, want Invalid", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) {
				t.Fatalf("%v, want Forbidden", err)
			}
			want := []string{"ValidatingAdmissionPolicy '" + r.by + "'", "An admission policy refused it", kube.RBACManifest}
			if r.by == byRBAC {
				want = []string{`User "system:serviceaccount:terraform-provider-windows:terraform-provider-windows" cannot`, kube.RBACManifest}
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q:\n%v", w, err)
				}
			}
			if r.by != byRBAC && strings.Contains(err.Error(), "lacks this permission") {
				t.Errorf("a policy's refusal blames a missing permission:\n%v", err)
			}
		})
	}

	// What was refused did not happen.
	if got, err := admin.CoreV1().Secrets("kube-system").Get(ctx, unrelated.Name, metav1.GetOptions{}); err != nil || len(got.Labels) > 0 {
		t.Errorf("the unrelated Secret after the refusals: %v, labels %v", err, got.Labels)
	}
	if _, err := admin.CoreV1().Nodes().Get(ctx, linux.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the Linux Node after the refusals: %v", err)
	}

	allowed := []struct {
		name string
		call func() error
	}{
		{"create, refresh and delete its bootstrap token", func() error {
			_, id, err := provider.CreateBootstrapToken(ctx, time.Minute, "policy test "+suffix)
			if err != nil {
				return err
			}
			if err := provider.RefreshBootstrapToken(ctx, id, 2*time.Minute); err != nil {
				return err
			}
			return provider.DeleteBootstrapToken(ctx, id)
		}},
		{"set a Windows Node's providerID, labels, taints and VM (windows_node's apply)", func() error {
			_, err := provider.ApplyNodeSettings(ctx, windows.Name, kube.NodeSettings{
				ProviderID: "vsphere://4206e3b7-0c7a-4d6b-9a7f-2f8d7d0f0e11",
				Labels:     map[string]string{"example.com/pool": "web", "node.kubernetes.io/windows-build": "10.0.20348", "node.kubernetes.io/pool": "web"},
				Taints:     []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
				VM:         kube.NodeVM("vc-uuid", "vm-42"),
			})
			return err
		}},
		{"cordon, uncordon and delete a Windows Node", func() error {
			if err := provider.CordonNode(ctx, windows.Name, true); err != nil {
				return err
			}
			if err := provider.MarkCordonedForPowerCycle(ctx, windows.Name, true); err != nil {
				return err
			}
			if err := provider.CordonNode(ctx, windows.Name, false); err != nil {
				return err
			}
			return provider.DeleteNode(ctx, windows.Name)
		}},
	}
	for _, a := range allowed {
		t.Run("allowed/"+a.name, func(t *testing.T) {
			if err := a.call(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func mustCreate[T any](t *testing.T, create func(context.Context, T, metav1.CreateOptions) (T, error), obj T) T {
	t.Helper()
	got, err := create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func daemonSet(name string, labels map[string]string) *appsv1.DaemonSet {
	sel := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{
					// No node has this label: the DaemonSet runs no pod.
					NodeSelector: map[string]string{"example.com/none": "true"},
					Containers:   []corev1.Container{{Name: "agent", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}
}

func node(name, os string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelOS: os}}}
}

// createToken creates a bootstrap token Secret like the provider's, its data
// changed by edit (an empty value removes the key).
func createToken(ctx context.Context, c *kube.Client, id string, edit map[string]string) error {
	data := map[string]string{
		"token-id": id, "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true",
		"auth-extra-groups": kube.BootstrapTokenGroup, "expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
	}
	for k, v := range edit {
		if v == "" {
			delete(data, k)
		} else {
			data[k] = v
		}
	}
	_, err := c.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Labels: map[string]string{kube.LabelManagedBy: kube.FieldManager}},
		Type:       bootstrapapi.SecretTypeBootstrapToken, StringData: data,
	}, metav1.CreateOptions{})
	if err == nil {
		_ = c.DeleteBootstrapToken(ctx, id)
		return fmt.Errorf("created bootstrap token %s", id)
	}
	return err
}
