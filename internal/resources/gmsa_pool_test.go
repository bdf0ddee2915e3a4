package resources_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// gmsaPodWait bounds a gMSA pod's scheduling and start on a member (the
// kubelet's start back-off is 10 s).
const gmsaPodWait = 2 * time.Minute

// checkGMSAOnMembers runs gMSA pods on a pool's domain-joined members
// (names: their computer names), through the CLI: the sandbox's
// windows-gmsa webhook installed, the domain given a KDS root key and two
// gMSAs (one whose hosts group holds the members, one whose group is
// empty), config plus a windows_gmsa_credential_spec for each applied; a
// pod of the first is scheduled onto a member and runs, a pod of the second
// fails to start there with access denied, as Windows refuses a host
// outside the group. The credential specs go with the next apply of a
// configuration without them; the webhook with the test.
func checkGMSAOnMembers(t *testing.T, cli *acctest.CLI, config string, names []string) {
	t.Helper()
	ctx := context.Background()
	k := acctest.Kube(t)
	dom := acctest.Sandbox.Domain
	ns := acctest.Name("gmsa-pool")
	if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := k.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "iis"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	webhook, err := acctest.Sandbox.InstallGMSAWebhook(ctx, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{ns}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { webhook.Stop(context.Background()) })

	// Active Directory's side (guide "gMSA for Windows pods", step 1 and 2).
	dom.AddKdsRootKey()
	seq := acctest.Seq() % 100000
	allowed, other := fmt.Sprintf("gmsa%d", seq), fmt.Sprintf("gmsx%d", seq)
	for account, members := range map[string][]string{allowed: names, other: nil} {
		group := account + "Hosts"
		if _, err := dom.AddGroup("CN=Users,"+dom.BaseDN(), group); err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if err := dom.AddMember(group, m+"$"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := dom.AddGMSA(account, account+"."+dom.Domain(), group); err != nil {
			t.Fatal(err)
		}
	}
	specs := gmsaResource("allowed", allowed, ns, allowed, dom.Domain(), dom.NetBIOS()) +
		gmsaResource("other", other, ns, other, dom.Domain(), dom.NetBIOS())
	if out, err := cli.Apply(config + specs); err != nil {
		t.Fatalf("applying the credential specs: %v\n%s", err, out)
	}

	run := func(podName, credspec string) {
		t.Helper()
		_, err := k.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: ns},
			Spec: corev1.PodSpec{
				ServiceAccountName: "iis",
				SecurityContext:    &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: &credspec}},
				NodeSelector:       map[string]string{"kubernetes.io/os": "windows"},
				Tolerations:        []corev1.Toleration{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
				Containers:         []corev1.Container{{Name: "iis", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("pod %s: %v", podName, err)
		}
		t.Cleanup(func() {
			_ = k.CoreV1().Pods(ns).Delete(context.Background(), podName, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		})
	}
	onMember := func(p *corev1.Pod) bool {
		return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, p.Spec.NodeName) })
	}
	run("as-gmsa", allowed)
	run("outside-group", other)
	var last *corev1.Pod
	if err := acctest.Eventually(gmsaPodWait, "the gMSA pod running on a member", func(ctx context.Context) (bool, error) {
		p, err := k.CoreV1().Pods(ns).Get(ctx, "as-gmsa", metav1.GetOptions{})
		last = p
		return err == nil && p.Status.Phase == corev1.PodRunning && onMember(p), err
	}); err != nil {
		t.Fatalf("%v; pod: %+v", err, last)
	}
	if err := acctest.Eventually(gmsaPodWait, "the pod of a gMSA whose group holds no member refused its start", func(ctx context.Context) (bool, error) {
		p, err := k.CoreV1().Pods(ns).Get(ctx, "outside-group", metav1.GetOptions{})
		last = p
		if err != nil || !onMember(p) || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "RunContainerError" && strings.Contains(w.Message, "hcs::CreateComputeSystem") &&
			strings.HasSuffix(w.Message, "Access is denied.: unknown"), nil
	}); err != nil {
		t.Fatalf("%v; pod: %+v", err, last)
	}
	for _, name := range []string{"as-gmsa", "outside-group"} {
		_ = k.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	}
}
