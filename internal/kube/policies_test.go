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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestAdmissionPolicies reads the documented role as an attacker holding the
// provider's token would, against the sandbox's API server, which enforces
// the manifest's admission policies: every escalation the role's verbs alone
// would allow is refused by the policy it names, and every call the provider
// makes (through its own code) still succeeds.
func TestAdmissionPolicies(t *testing.T) {
	s, admin := cluster(t)
	ctx := t.Context()
	provider, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{s.ProviderKubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)

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
	// Named like windows_node_networking's agent, but not labelled by it.
	impostor := mustCreate(t, admin.AppsV1().DaemonSets(ns.Name).Create, daemonSet("kube-proxy-windows", nil))
	nsFlannel := mustCreate(t, admin.AppsV1().DaemonSets(ns.Name).Create, daemonSet("kube-flannel-ds-windows", map[string]string{
		kube.LabelManagedBy: kube.FieldManager, kube.LabelPartOf: kube.NetworkingPartOf,
	}))

	linux := mustCreate(t, admin.CoreV1().Nodes().Create, node("tpw-policy-linux-"+suffix, "linux"))
	windows := mustCreate(t, admin.CoreV1().Nodes().Create, node("tpw-policy-windows-"+suffix, "windows"))
	for _, n := range []string{linux.Name, windows.Name} {
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}) })
	}

	foreignRC := mustCreate(t, admin.NodeV1().RuntimeClasses().Create, &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "tpw-policy-foreign-" + suffix}, Handler: "runhcs-wcow-process",
	})
	t.Cleanup(func() {
		_ = admin.NodeV1().RuntimeClasses().Delete(context.Background(), foreignRC.Name, metav1.DeleteOptions{})
	})

	mergePatch := metav1.PatchOptions{}
	refusals := []struct {
		name, policy string
		call         func() error
	}{
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
		{"create a bootstrap token in another group", rbac.PolicySecrets, func() error {
			return createToken(ctx, provider, "y"+kubeadmID[1:], map[string]string{"auth-extra-groups": "system:bootstrappers:elsewhere"})
		}},
		{"create a bootstrap token usable for signing", rbac.PolicySecrets, func() error {
			return createToken(ctx, provider, "y"+kubeadmID[1:], map[string]string{"usage-bootstrap-signing": "true"})
		}},
		{"create a bootstrap token that never expires", rbac.PolicySecrets, func() error {
			return createToken(ctx, provider, "y"+kubeadmID[1:], map[string]string{"expiration": ""})
		}},
		{"change another DaemonSet's pod template (its image)", rbac.PolicyDaemonSets, func() error {
			return patchDaemonSet(ctx, provider, other, `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"evil.example/root:1"}]}}}}`)
		}},
		{"make another DaemonSet privileged on the host network", rbac.PolicyDaemonSets, func() error {
			return patchDaemonSet(ctx, provider, other, `{"spec":{"template":{"spec":{"hostNetwork":true,"hostPID":true}}}}`)
		}},
		{"let another DaemonSet tolerate every taint", rbac.PolicyDaemonSets, func() error {
			return patchDaemonSet(ctx, provider, other, `{"spec":{"template":{"spec":{"tolerations":[{"operator":"Exists"}]}}}}`)
		}},
		{"give another DaemonSet an owner (the garbage collector would delete it)", rbac.PolicyDaemonSets, func() error {
			return patchDaemonSet(ctx, provider, other, `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"00000000-0000-0000-0000-000000000000"}]}}`)
		}},
		{"label another DaemonSet as windows_node_networking's", rbac.PolicyDaemonSets, func() error {
			return patchDaemonSet(ctx, provider, impostor, `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"terraform-provider-windows","app.kubernetes.io/part-of":"windows-node-networking"}}}`)
		}},
		{"change the pod template of a DaemonSet named like the provider's but not its own", rbac.PolicyDaemonSets, func() error {
			return patchDaemonSet(ctx, provider, impostor, `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"evil.example/root:1"}]}}}}`)
		}},
		{"delete a Linux Node", rbac.PolicyNodes, func() error { return provider.DeleteNode(ctx, linux.Name) }},
		{"cordon a Linux Node", rbac.PolicyNodes, func() error { return provider.CordonNode(ctx, linux.Name, true) }},
		{"relabel a Windows Node as Linux", rbac.PolicyNodes, func() error {
			_, err := provider.CoreV1().Nodes().Patch(ctx, windows.Name, types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"kubernetes.io/os":"linux"}}}`), mergePatch)
			return err
		}},
		{"patch a Windows Node's status", rbac.PolicyNodes, func() error {
			_, err := provider.CoreV1().Nodes().Patch(ctx, windows.Name, types.MergePatchType,
				[]byte(`{"status":{"capacity":{"example.com/fake":"1"}}}`), mergePatch, "status")
			return err
		}},
		{"update a RuntimeClass windows_runtime_class did not create", rbac.PolicyRuntimeClasses, func() error {
			_, err := provider.UpdateRuntimeClass(ctx, kube.RuntimeClassSpec{Name: foreignRC.Name, Handler: foreignRC.Handler})
			return err
		}},
		{"delete a RuntimeClass windows_runtime_class did not create", rbac.PolicyRuntimeClasses, func() error {
			return provider.DeleteRuntimeClass(ctx, foreignRC.Name)
		}},
		{"create an unlabelled RuntimeClass", rbac.PolicyRuntimeClasses, func() error {
			_, err := provider.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
				ObjectMeta: metav1.ObjectMeta{Name: "tpw-policy-unlabelled-" + suffix}, Handler: "runhcs-wcow-process",
			}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, r := range refusals {
		t.Run("refused/"+r.name, func(t *testing.T) {
			err := r.call()
			if !apierrors.IsForbidden(err) {
				t.Fatalf("%v, want Forbidden", err)
			}
			for _, want := range []string{"ValidatingAdmissionPolicy '" + r.policy + "'", "An admission policy refused it", kube.RBACManifest} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error lacks %q:\n%v", want, err)
				}
			}
			if strings.Contains(err.Error(), "lacks this permission") {
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
	if got, err := admin.AppsV1().DaemonSets(ns.Name).Get(ctx, other.Name, metav1.GetOptions{}); err != nil ||
		got.Spec.Template.Spec.Containers[0].Image != other.Spec.Template.Spec.Containers[0].Image || got.Spec.Template.Spec.HostNetwork {
		t.Errorf("the other DaemonSet after the refusals: %v", err)
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
		{"guard another DaemonSet (its nodeSelector) and let it go", func() error {
			ds, err := provider.GuardDaemonSet(ctx, ns.Name, other.Name)
			if err != nil {
				return err
			}
			if !kube.LinuxOnly(ds) {
				return fmt.Errorf("nodeSelector %v after the guard", ds.Spec.Template.Spec.NodeSelector)
			}
			return provider.UnguardDaemonSet(ctx, ns.Name, other.Name)
		}},
		{"set another DaemonSet's affinity", func() error {
			return patchDaemonSet(ctx, provider, other, `{"spec":{"template":{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/os","operator":"NotIn","values":["windows"]}]}]}}}}}}}`)
		}},
		{"change its own networking DaemonSet's pod template", func() error {
			return patchDaemonSet(ctx, provider, nsFlannel, `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"registry.k8s.io/pause:3.10.1"}]}}}}`)
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
		{"create, update and delete its RuntimeClass", func() error {
			spec := kube.RuntimeClassSpec{Name: "tpw-policy-own-" + suffix, Handler: "runhcs-wcow-process", NodeSelector: map[string]string{kube.LabelOS: "windows"}}
			if _, err := provider.CreateRuntimeClass(ctx, spec); err != nil {
				return err
			}
			spec.NodeSelector["example.com/pool"] = "web"
			if _, err := provider.UpdateRuntimeClass(ctx, spec); err != nil {
				return err
			}
			return provider.DeleteRuntimeClass(ctx, spec.Name)
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

func patchDaemonSet(ctx context.Context, c *kube.Client, ds *appsv1.DaemonSet, patch string) error {
	_, err := c.AppsV1().DaemonSets(ds.Namespace).Patch(ctx, ds.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
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
