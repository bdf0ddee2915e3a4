package kubeletsim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
)

// TestGMSAContainers runs pods with a gMSA credential spec on a node of the
// sandbox's domain: outside the domain the container fails to start with
// 1355, joined but outside the gMSA's hosts group with access denied, and
// once the host's account is in the group the container starts (the
// kubelet's back-off retries it); a credential spec of another domain
// fails with 1355 still.
func TestGMSAContainers(t *testing.T) {
	s := cluster(t)
	cs := s.ControlPlane.Client
	ctx := context.Background()
	const name = "win-gmsa"
	n := kubeletsimtest.NewNode(t, name, kubeletsimtest.Options{Checker: s.KubeletChecker(), GMSA: s.GMSADomain()})
	nd := &node{Node: n, name: name, tr: acctest.ConnectNode(t, n)}
	if err := nd.join(t, joinConfig(s, name, createBootstrapToken(t, cs))); err != nil {
		t.Fatalf("join: %v\n%s", err, nd.kubeletLog())
	}
	waitForNode(t, cs, name, "Ready with a pod CIDR", func(x *corev1.Node) bool { return nodeReady(x) && x.Spec.PodCIDR != "" })

	d := s.Domain
	d.AddKdsRootKey()
	group := "GmsaHosts" + fmt.Sprint(acctest.Seq()%100000)
	gmsa := "gmsa" + fmt.Sprint(acctest.Seq()%100000)
	if _, err := d.AddGroup("CN=Users,"+d.BaseDN(), group); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddGMSA(gmsa, gmsa+"."+d.Domain(), group); err != nil {
		t.Fatal(err)
	}
	spec := func(domain string) string {
		return fmt.Sprintf(`{"ActiveDirectoryConfig":{"GroupManagedServiceAccounts":[{"Name":%q,"Scope":%q}]},"CmsPlugins":["ActiveDirectory"],`+
			`"DomainJoinConfig":{"DnsName":%q,"DnsTreeName":%q,"Guid":"56d9b66c-d746-4f87-bd26-26760cfdca2e","MachineAccountName":%q,"NetBiosName":"CORP","Sid":"S-1-5-21-1-2-3"}}`,
			gmsa, domain, domain, domain, gmsa)
	}
	gmsaPod := func(podName, credspec string) string {
		t.Helper()
		p, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName},
			Spec: corev1.PodSpec{
				NodeName:        name,
				Tolerations:     []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: &gmsa, GMSACredentialSpec: &credspec}},
				Containers:      []corev1.Container{{Name: "iis", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{}) })
		return p.Name
	}
	failsWith := func(podName, cause string) {
		t.Helper()
		p := waitForPod(t, cs, podName, "failing to start with "+cause, func(p *corev1.Pod) bool {
			for _, c := range p.Status.ContainerStatuses {
				if w := c.State.Waiting; w != nil && w.Reason == "RunContainerError" && strings.Contains(w.Message, cause) {
					return true
				}
			}
			return false
		})
		if p.Status.Phase != corev1.PodPending {
			t.Fatalf("pod %s is %s", podName, p.Status.Phase)
		}
		msg := p.Status.ContainerStatuses[0].State.Waiting.Message
		if !strings.HasPrefix(msg, "failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem ") || !strings.HasSuffix(msg, cause+": unknown") {
			t.Fatalf("message %q is not containerd's wording", msg)
		}
		waitForEvent(t, cs, podName, "Failed", "Error: failed to create containerd task")
	}

	notJoined := gmsaPod("gmsa-not-joined", spec(d.Domain()))
	failsWith(notJoined, "The specified domain either does not exist or could not be contacted.")

	computer := n.Host.ComputerName()
	loc := addomain.Locators{d.Domain(): d.Controller}
	if _, err := addomain.Join(ctx, loc, addomain.JoinRequest{
		Domain: d.Domain(), OU: sandbox.ADOU(), User: sandbox.ADNetBIOS + `\` + d.JoinUser, Password: d.JoinPassword, ComputerName: computer,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = addomain.DeleteComputer(context.Background(), loc, d.Domain(), sandbox.ADNetBIOS+`\`+d.JoinUser, d.JoinPassword, computer)
	})
	notInGroup := gmsaPod("gmsa-not-in-group", spec(d.Domain()))
	failsWith(notInGroup, "Access is denied.")
	otherDomain := gmsaPod("gmsa-other-domain", spec("fabrikam.example.test"))
	failsWith(otherDomain, "The specified domain either does not exist or could not be contacted.")

	if err := d.AddMember(group, computer+"$"); err != nil {
		t.Fatal(err)
	}
	waitForPod(t, cs, notInGroup, "Running once its host is in the gMSA's group", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
}
