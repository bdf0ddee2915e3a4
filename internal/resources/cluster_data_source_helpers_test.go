package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/retry"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// waitTimeout bounds every watch in these tests; the events they wait for
// (a controller allocating a pod CIDR, creating a ServiceAccount) take
// well under a second on the sandbox.
const waitTimeout = time.Minute

// hasCheck matches a `checks` list that holds the check id with status and
// a message (plus remedy) matching pattern; other checks are ignored, so
// objects of other tests do not matter.
type hasCheck struct {
	id, status string
	pattern    *regexp.Regexp
}

func expectCheck(address, id, status, pattern string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(address, tfjsonpath.New("checks"), hasCheck{id, status, regexp.MustCompile("(?s)" + pattern)})
}

func (h hasCheck) CheckValue(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("checks is %T, not a list", v)
	}
	for _, item := range list {
		c, _ := item.(map[string]any)
		if c["id"] != h.id {
			continue
		}
		if c["status"] != h.status {
			return fmt.Errorf("check %s has status %v, want %s: %v", h.id, c["status"], h.status, c["message"])
		}
		text := fmt.Sprintf("%v\n%v", c["message"], c["remedy"])
		if !h.pattern.MatchString(text) {
			return fmt.Errorf("check %s: %q does not match %s", h.id, text, h.pattern)
		}
		return nil
	}
	return fmt.Errorf("no check %s among %d checks", h.id, len(list))
}

func (h hasCheck) String() string { return fmt.Sprintf("check %s = %s", h.id, h.status) }

// lacksCheck matches a `checks` list without the check id.
type lacksCheck struct{ id string }

func expectNoCheck(address, id string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(address, tfjsonpath.New("checks"), lacksCheck{id})
}

func (l lacksCheck) CheckValue(v any) error {
	list, _ := v.([]any)
	for _, item := range list {
		if c, _ := item.(map[string]any); c["id"] == l.id {
			return fmt.Errorf("unexpected check %s: %v", l.id, c)
		}
	}
	return nil
}

func (l lacksCheck) String() string { return "no check " + l.id }

var _ knownvalue.Check = hasCheck{}

// createNamespace creates a namespace for one test, deleted at cleanup (the
// namespace controller then removes what is left in it), and waits for its
// default ServiceAccount, without which pods are refused.
func createNamespace(t *testing.T, k *kube.Client, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: acctest.Name(prefix)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = k.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	waitUntil(t, cache.NewFilteredListWatchFromClient(k.CoreV1().RESTClient(), "serviceaccounts", ns.Name, byName("default")),
		&corev1.ServiceAccount{}, func(runtime.Object) bool { return true })
	return ns.Name
}

// createNode registers a Node as an admin would (no kubelet runs it: it
// stays NotReady), deleted at cleanup.
func createNode(t *testing.T, k *kube.Client, name string, labels map[string]string) *corev1.Node {
	t.Helper()
	n, err := k.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = k.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return n
}

// setAllocatable writes the node's capacity and allocatable, what its
// kubelet would report.
func setAllocatable(t *testing.T, k *kube.Client, name, cpu, memory string) {
	t.Helper()
	ctx := context.Background()
	resources := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110")}
	// The node lifecycle controller writes the status of a new node too.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := k.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Capacity, n.Status.Allocatable = resources, resources
		_, err = k.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("setting the allocatable resources of node %s: %v", name, err)
	}
}

// waitForPodCIDR waits, with a watch, until the controller manager has
// allocated the node a pod CIDR.
func waitForPodCIDR(t *testing.T, k *kube.Client, name string) string {
	t.Helper()
	obj := waitUntil(t, cache.NewFilteredListWatchFromClient(k.CoreV1().RESTClient(), "nodes", "", byName(name)),
		&corev1.Node{}, func(o runtime.Object) bool { return o.(*corev1.Node).Spec.PodCIDR != "" })
	return obj.(*corev1.Node).Spec.PodCIDR
}

// bindPod creates a pod already bound to node (as the scheduler would bind
// it), requesting cpu and memory.
func bindPod(t *testing.T, k *kube.Client, namespace, node, cpu, memory string) {
	t.Helper()
	_, err := k.CoreV1().Pods(namespace).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "load-", Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "load", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
			}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a pod on %s: %v", node, err)
	}
}

// createDaemonSet creates a DaemonSet as its manifest's tool would, under
// its own field manager.
func createDaemonSet(t *testing.T, k *kube.Client, namespace, name string, spec corev1.PodSpec) *appsv1.DaemonSet {
	t.Helper()
	labels := map[string]string{"app": name}
	if len(spec.Containers) == 0 {
		spec.Containers = []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}
	}
	ds, err := k.AppsV1().DaemonSets(namespace).Create(context.Background(), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}, metav1.CreateOptions{FieldManager: "test-manifest"})
	if err != nil {
		t.Fatalf("creating DaemonSet %s/%s: %v", namespace, name, err)
	}
	t.Cleanup(func() {
		_ = k.AppsV1().DaemonSets(namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return ds
}

func byName(name string) func(*metav1.ListOptions) {
	return func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name }
}

// waitUntil lists and watches until an object satisfies done.
func waitUntil(t *testing.T, lw cache.ListerWatcher, objType runtime.Object, done func(runtime.Object) bool) runtime.Object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ev, err := watchtools.UntilWithSync(ctx, lw, objType, nil, func(ev watch.Event) (bool, error) {
		return ev.Type != watch.Deleted && done(ev.Object), nil
	})
	if err != nil {
		t.Fatalf("waiting for %T: %v", objType, err)
	}
	return ev.Object
}
