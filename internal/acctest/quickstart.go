package acctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
)

// QuickstartModes are the networking modes the quickstart's acceptance
// test (Quickstart) runs with: each runs in the package whose sandbox runs
// that mode's Linux side (antrea's in internal/resources/antreaacc).
var QuickstartModes = []string{"flannel", "calico", "antrea"}

// quickstartNodes are examples/quickstart's two windows_node names.
var quickstartNodes = []string{"win-0", "win-1"}

// repoRoot is the repository's root (this file is internal/acctest/quickstart.go).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// QuickstartConfig is examples/quickstart's .tf files as they are, but for
// the provider's source: the test serves the provider in-process as
// hashicorp/windows (ProviderFactories), which no version constraint names.
// Its variables come from the sandbox's TF_VAR_* (and TF_VAR_cni).
func QuickstartConfig(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(), "examples", "quickstart", "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/quickstart: %v (%d files)", err, len(files))
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteString("\n")
	}
	source := regexp.MustCompile(`source\s*=\s*"wincluster/windows"\s*\n\s*version\s*=\s*"[^"]*"`)
	config := b.String()
	if !source.MatchString(config) {
		t.Fatal("examples/quickstart no longer names wincluster/windows with a version: update QuickstartConfig")
	}
	return source.ReplaceAllString(config, `source = "hashicorp/windows"`)
}

// Quickstart is the quickstart's acceptance test for one networking mode
// (issue 36's Done-when): examples/quickstart with var.cni = cni joins its
// two nodes; seed 000's IIS workload (examples/quickstart/iis.yaml) runs on
// them and is reached through its Service from a pod on the Linux
// control-plane node and from a Windows pod on the other node, and not once
// the Service has no endpoints; a change of host_process_image rolls the
// agents' pods onto it in place, no node replaced; destroy leaves no VM,
// template, Node, networking object or RuntimeClass.
func Quickstart(t *testing.T, cni string) {
	RequireSandbox(t, "a cluster running the mode's Linux side")
	mode, ok := networking.Lookup(cni)
	if !ok {
		t.Fatalf("no networking mode %q", cni)
	}
	t.Setenv("TF_VAR_cni", cni)
	config := QuickstartConfig(t)
	// The mode setting the roll step changes: the agents' HostProcess image,
	// here the same image by its tag alone, as a mirror's copy would differ.
	rolled := strings.Replace(config, "  cni = var.cni\n", "  cni = var.cni\n\n  host_process_image = \""+rolledHostProcessImage+"\"\n", 1)
	if rolled == config {
		t.Fatal("examples/quickstart's windows_node_networking no longer says `cni = var.cni`: update Quickstart")
	}
	steps := []resource.TestStep{{
		Config: config,
		Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr("windows_node_networking.this", "cni", cni),
			CheckNodesReady(t, quickstartNodes...),
			func(*terraform.State) error { return CheckAgentsReady(t, mode, "kube-system", quickstartNodes...) },
			func(*terraform.State) error { return checkIISWorkload(t) },
		),
	}, {
		// Documented (host_process_image): the DaemonSets change in
		// place and roll their pods node by node; no node is replaced,
		// drained or joined again.
		Config: rolled,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction("windows_node_networking.this", plancheck.ResourceActionUpdate),
			plancheck.ExpectResourceAction("windows_node.worker[0]", plancheck.ResourceActionNoop),
			plancheck.ExpectResourceAction("windows_node.worker[1]", plancheck.ResourceActionNoop),
			plancheck.ExpectResourceAction("windows_golden_image.ltsc2022", plancheck.ResourceActionNoop),
		}},
		Check: func(*terraform.State) error { return checkAgentsRolled(t, mode, rolledHostProcessImage) },
	}}
	if !runsHostProcessImage(t, mode) {
		// A mode whose agents run their own image (antrea: antrea-windows)
		// has no host_process_image to roll: documented on the attribute.
		steps = steps[:1]
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { PreCheck(t) },
		ProtoV6ProviderFactories: ProviderFactories,
		Steps:                    steps,
		CheckDestroy:             resource.ComposeAggregateTestCheckFunc(CheckNodesDestroyed(t), func(*terraform.State) error { return checkClusterLeftClean(t, mode) }),
	})
}

// runsHostProcessImage reports whether the mode's DaemonSets run
// windows_node_networking's host_process_image.
func runsHostProcessImage(t *testing.T, mode networking.Mode) bool {
	const probe = "registry.example/host-process:probe"
	objs, err := mode.Objects(networking.Spec{Namespace: "kube-system", HostProcessImage: probe, APIServer: "https://127.0.0.1:6443",
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		for _, c := range o.DaemonSet.Spec.Template.Spec.Containers {
			if c.Image != nil && *c.Image == probe {
				return true
			}
		}
	}
	return false
}

// rolledHostProcessImage is networking.DefaultHostProcessImage by its tag.
var rolledHostProcessImage, _, _ = strings.Cut(networking.DefaultHostProcessImage, "@")

// checkAgentsRolled waits until every agent's DaemonSet has rolled onto
// image on both nodes: its pods there run it and are Ready, and the
// DaemonSet counts them updated.
func checkAgentsRolled(t *testing.T, mode networking.Mode, image string) error {
	k := Kube(t)
	for _, a := range mode.Agents() {
		if err := Eventually(90*time.Second, a.DaemonSet+" rolled onto "+image, func(ctx context.Context) (bool, error) {
			ds, err := k.AppsV1().DaemonSets("kube-system").Get(ctx, a.DaemonSet, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			pods, err := k.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			if ds.Spec.Template.Spec.Containers[0].Image != image || ds.Status.ObservedGeneration < ds.Generation ||
				ds.Status.UpdatedNumberScheduled != ds.Status.DesiredNumberScheduled {
				var seen []string
				for i := range pods.Items {
					if p := &pods.Items[i]; strings.HasPrefix(p.Name, a.DaemonSet+"-") {
						seen = append(seen, fmt.Sprintf("%s on %s (%s, deleting %v): %s %+v", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Image, p.DeletionTimestamp != nil, p.Status.Phase, p.Status.ContainerStatuses))
					}
				}
				return false, fmt.Errorf("%s: image %s, status %+v; pods %v", a.DaemonSet, ds.Spec.Template.Spec.Containers[0].Image, ds.Status, seen)
			}
			for _, node := range quickstartNodes {
				ok := false
				for i := range pods.Items {
					p := &pods.Items[i]
					ok = ok || (p.Spec.NodeName == node && strings.HasPrefix(p.Name, a.DaemonSet+"-") && p.DeletionTimestamp == nil &&
						p.Spec.Containers[0].Image == image && kube.PodRunningAndReady(p))
				}
				if !ok {
					var seen []string
					for i := range pods.Items {
						if p := &pods.Items[i]; p.Spec.NodeName == node && strings.HasPrefix(p.Name, a.DaemonSet+"-") {
							seen = append(seen, fmt.Sprintf("%s (%s, deleting %v): %+v", p.Name, p.Spec.Containers[0].Image, p.DeletionTimestamp != nil, p.Status.ContainerStatuses))
						}
					}
					return false, fmt.Errorf("no Ready %s pod of %s on %s: %v", a.DaemonSet, image, node, seen)
				}
			}
			return true, nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// CheckAgentsReady: every agent of the mode (its DaemonSets' pods in
// namespace) Running and Ready on each of nodes.
func CheckAgentsReady(t *testing.T, mode networking.Mode, namespace string, nodes ...string) error {
	pods, err := Kube(t).CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, node := range nodes {
		for _, a := range mode.Agents() {
			ok := false
			for i := range pods.Items {
				p := &pods.Items[i]
				ok = ok || (p.Spec.NodeName == node && strings.HasPrefix(p.Name, a.DaemonSet+"-") && kube.PodRunningAndReady(p))
			}
			if !ok {
				return fmt.Errorf("no Running and Ready %s pod on %s", a.DaemonSet, node)
			}
		}
	}
	return nil
}

// checkIISWorkload applies iis.yaml in a namespace of its own, waits for
// its pod, and connects to the Service by name (cluster DNS, then the
// ClusterIP) from a Linux pod and from a Windows pod on the node the IIS pod
// is not on; then scales it to zero and expects the Linux pod's connection
// refused (kube-proxy's REJECT of a Service without endpoints).
func checkIISWorkload(t *testing.T) error {
	ctx := context.Background()
	k := Kube(t)
	ns := Name("iis")
	if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() { _ = k.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) }()
	manifest, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "quickstart", "iis.yaml"))
	if err != nil {
		return err
	}
	var deployment *appsv1.Deployment
	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			return fmt.Errorf("iis.yaml: %w", err)
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			if deployment, err = k.AppsV1().Deployments(ns).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				return err
			}
		case *corev1.Service:
			if _, err := k.CoreV1().Services(ns).Create(ctx, o, metav1.CreateOptions{}); err != nil {
				return err
			}
		default:
			return fmt.Errorf("iis.yaml: unexpected %T", obj)
		}
	}
	if deployment == nil {
		return fmt.Errorf("iis.yaml has no Deployment")
	}
	var iisNode string
	if err := Eventually(5*time.Minute, "the IIS pod Running and Ready behind the Service", func(ctx context.Context) (bool, error) {
		pods, err := k.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=iis"})
		if err != nil || len(pods.Items) != 1 || !kube.PodRunningAndReady(&pods.Items[0]) {
			return false, fmt.Errorf("pods %v: %w", podSummaries(pods), err)
		}
		iisNode = pods.Items[0].Spec.NodeName
		return readyEndpoints(ctx, k, ns) == 1, nil
	}); err != nil {
		return err
	}
	other := quickstartNodes[0]
	if iisNode == other {
		other = quickstartNodes[1]
	}
	if !strings.HasPrefix(iisNode, "win-") {
		return fmt.Errorf("the IIS pod runs on %s, not a quickstart node", iisNode)
	}
	const target = "iis:80"
	t.Logf("the IIS pod runs on %s", iisNode)
	if msg, ok, err := runConnectPod(ctx, k, ns, "from-linux", linuxnode.NodeName, corev1.Linux, target); err != nil || !ok {
		return fmt.Errorf("a Linux pod on %s connecting to %s: %v %s", linuxnode.NodeName, target, err, msg)
	}
	t.Logf("a pod on %s reached %s", linuxnode.NodeName, target)
	if msg, ok, err := runConnectPod(ctx, k, ns, "from-windows", other, corev1.Windows, target); err != nil || !ok {
		return fmt.Errorf("a Windows pod on %s connecting to %s (IIS on %s): %v %s", other, target, iisNode, err, msg)
	}
	t.Logf("a pod on %s reached %s", other, target)
	// Without endpoints the same connection fails: the traffic went
	// through the Service's rules, not around them.
	scale, err := k.AppsV1().Deployments(ns).GetScale(ctx, deployment.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	scale.Spec.Replicas = 0
	if _, err := k.AppsV1().Deployments(ns).UpdateScale(ctx, deployment.Name, scale, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if err := Eventually(2*time.Minute, "the Service without ready endpoints", func(ctx context.Context) (bool, error) {
		return readyEndpoints(ctx, k, ns) == 0, nil
	}); err != nil {
		return err
	}
	msg, ok, err := runConnectPod(ctx, k, ns, "from-linux-no-endpoints", linuxnode.NodeName, corev1.Linux, target)
	if err != nil {
		return err
	}
	if ok || !strings.Contains(msg, "REFUSED") {
		return fmt.Errorf("a Linux pod connecting to %s without endpoints: succeeded %v, %q; want REFUSED", target, ok, msg)
	}
	t.Logf("without endpoints, a pod on %s: %s", linuxnode.NodeName, strings.ReplaceAll(msg, "\n", " "))
	return nil
}

func readyEndpoints(ctx context.Context, k *kube.Client, ns string) int {
	slices, err := k.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=iis"})
	if err != nil {
		return -1
	}
	n := 0
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n += len(e.Addresses)
			}
		}
	}
	return n
}

// runConnectPod runs agnhost connect to target in a pod bound to node and
// returns its termination message and whether it succeeded.
func runConnectPod(ctx context.Context, k *kube.Client, ns, name, node string, os corev1.OSName, target string) (string, bool, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node, RestartPolicy: corev1.RestartPolicyNever, OS: &corev1.PodOS{Name: os},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "connect", Image: kube.ProbeImage, Args: []string{"connect", "--timeout=30s", target},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}},
		},
	}
	if _, err := k.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return "", false, err
	}
	var done *corev1.Pod
	if err := Eventually(2*time.Minute, "pod "+name+" to finish", func(ctx context.Context) (bool, error) {
		p, err := k.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		done = p
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, nil
	}); err != nil {
		return fmt.Sprintf("%+v", done.Status), false, err
	}
	var msg string
	for _, c := range done.Status.ContainerStatuses {
		if c.State.Terminated != nil {
			msg += c.State.Terminated.Message
		}
	}
	return msg, done.Status.Phase == corev1.PodSucceeded, nil
}

func podSummaries(pods *corev1.PodList) []string {
	if pods == nil {
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("%s on %q: %s", p.Name, p.Spec.NodeName, p.Status.Phase))
	}
	return out
}

// checkClusterLeftClean: after destroy, no Windows Node, none of the mode's
// DaemonSets and no quickstart RuntimeClass is left.
func checkClusterLeftClean(t *testing.T, mode networking.Mode) error {
	ctx := context.Background()
	k := Kube(t)
	nodes, err := k.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/os=windows"})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		for _, q := range quickstartNodes {
			if n.Name == q {
				return fmt.Errorf("Node %s is left", n.Name)
			}
		}
	}
	for _, a := range mode.Agents() {
		if _, err := k.AppsV1().DaemonSets("kube-system").Get(ctx, a.DaemonSet, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("DaemonSet kube-system/%s is left (err %v)", a.DaemonSet, err)
		}
	}
	for _, rc := range []string{"windows-2019", "windows-2022"} {
		if _, err := k.NodeV1().RuntimeClasses().Get(ctx, rc, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("RuntimeClass %s is left (err %v)", rc, err)
		}
	}
	return nil
}
