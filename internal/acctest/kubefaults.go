package acctest

// Fixtures of the Kubernetes-side fault matrix (internal/reliability): a
// resource in the state the CLI holds, nodes cloned from a template built once for several cases, and a
// workload whose PodDisruptionBudget holds a drain for as long as a test
// needs.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
)

// StateResource finds addr in the root module of st, or nil.
func StateResource(st *tfjson.State, addr string) *tfjson.StateResource {
	if st == nil || st.Values == nil || st.Values.RootModule == nil {
		return nil
	}
	for _, r := range st.Values.RootModule.Resources {
		if r.Address == addr {
			return r
		}
	}
	return nil
}

// SharedTemplate builds the sandbox's golden image once, with its own CLI
// directory (destroyed when t ends), and returns its template path: cases
// that are about a node, not the image, clone from it.
func SharedTemplate(t *testing.T) string {
	t.Helper()
	cli := NewCLI(t)
	if out, err := cli.Apply(GoldenImageConfig(Name("img"), nil)); err != nil {
		t.Fatalf("building the shared golden image: %v\n%s", err, out)
	}
	st, err := cli.State()
	if err != nil {
		t.Fatal(err)
	}
	r := StateResource(st, GoldenImageAddress)
	if r == nil {
		t.Fatal("the shared golden image is not in the state")
	}
	path, _ := r.AttributeValues["template_path"].(string)
	if path == "" {
		t.Fatal("the shared golden image has no template_path")
	}
	return path
}

// NodeConfigOnTemplate is NodeConfig with the nodes cloned from an
// existing template (SharedTemplate) instead of an image of their own.
func NodeConfigOnTemplate(template string, nodes []string, body string) string {
	const image = "unused"
	config := NodeConfig(image, nodes, body)
	config = strings.Replace(config, GoldenImageConfig(image, nil),
		"variable \"admin_password\" {\n  type      = string\n  sensitive = true\n}\n", 1)
	return strings.ReplaceAll(config, "windows_golden_image.test.template_path", fmt.Sprintf("%q", template))
}

// BlockedWorkload runs a Deployment of one pod on node, in a namespace of
// its own, with a PodDisruptionBudget that allows no disruption: a drain of
// the node cordons it and then retries the pod's eviction until release is
// called (which deletes the budget). It returns once the budget counts the
// pod healthy, so a drain is refused from the start.
func BlockedWorkload(t *testing.T, node string) (release func()) {
	t.Helper()
	k := Kube(t)
	ctx := context.Background()
	ns, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Name("blocked")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	labels := map[string]string{"app": "blocked"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "blocked"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"kubernetes.io/os": "windows", "kubernetes.io/hostname": node},
				// windows_node's default taint.
				Tolerations: []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
				Containers:  []corev1.Container{{Name: "app", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}},
			}},
		},
	}
	if _, err := k.AppsV1().Deployments(ns.Name).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "blocked"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &intstr.IntOrString{Type: intstr.Int, IntVal: 1},
			Selector:     &metav1.LabelSelector{MatchLabels: labels},
		},
	}
	if _, err := k.PolicyV1().PodDisruptionBudgets(ns.Name).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Eventually(2*time.Minute, "the budget counts the pod healthy", func(ctx context.Context) (bool, error) {
		p, err := k.PolicyV1().PodDisruptionBudgets(ns.Name).Get(ctx, "blocked", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.CurrentHealthy == 1 && p.Status.ExpectedPods == 1, fmt.Errorf("status %+v", p.Status)
	}); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := k.PolicyV1().PodDisruptionBudgets(ns.Name).Delete(context.Background(), "blocked", metav1.DeleteOptions{}); err != nil {
			t.Errorf("releasing the drain: %v", err)
		}
	}
}

// NodeCordoned reports whether the Node is cordoned (a drain under way, or
// left behind).
func NodeCordoned(t *testing.T, name string) (bool, error) {
	n, err := Kube(t).FindNode(context.Background(), name)
	if err != nil {
		return false, err
	}
	return n.Spec.Unschedulable, nil
}

// WaitForNode watches the Node until cond holds for it (a watch, not a
// poll: a test that injects a fault at a point of the provider's run sees
// that point as it happens).
func WaitForNode(t *testing.T, name string, timeout time.Duration, what string, cond func(*corev1.Node) bool) error {
	k := Kube(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return k.CoreV1().Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return k.CoreV1().Nodes().Watch(ctx, o)
		},
	}
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, nil, func(e watch.Event) (bool, error) {
		n, ok := e.Object.(*corev1.Node)
		return ok && e.Type != watch.Deleted && cond(n), nil
	})
	if err != nil {
		return fmt.Errorf("Node %s %s: not within %s: %w", name, what, timeout, err)
	}
	return nil
}
