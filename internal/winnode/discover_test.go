package winnode

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

func TestNodeOf(t *testing.T) {
	node := func(name, providerID string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	}
	vm := func(name, bios, host string) *vsphere.VMInfo {
		return &vsphere.VMInfo{VM: vsphere.VM{Name: name, BIOSUUID: bios}, GuestHostName: host}
	}
	const bios = "4211AAAA-bbbb-cccc-dddd-eeeeffff0001"
	nodes := []corev1.Node{
		node("win-a", "vsphere://4211aaaa-bbbb-cccc-dddd-eeeeffff0001"),
		node("win-b", ""),
		node("win-c", "vsphere://4211aaaa-bbbb-cccc-dddd-eeeeffff0003"),
		node("winhost", ""),
	}
	cases := []struct {
		name     string
		vm       *vsphere.VMInfo
		wantNode string
		wantHow  string
	}{
		{"providerID, whatever the VM is called", vm("vm-with-another-name", bios, ""), "win-a", MatchedByProviderID},
		{"name of a Node without providerID, any case", vm("WIN-B", "4211aaaa-0000-0000-0000-000000000002", ""), "win-b", MatchedByName},
		{"guest host name, FQDN", vm("vm-17", "4211aaaa-0000-0000-0000-000000000004", "WINHOST.corp.example"), "winhost", MatchedByName},
		{"a Node whose providerID names another VM is not matched by name", vm("win-c", "4211aaaa-0000-0000-0000-000000000009", ""), "", ""},
		{"no Node", vm("web-1", "4211aaaa-0000-0000-0000-000000000005", "web-1"), "", ""},
		{"no BIOS UUID", vm("vm-x", "", ""), "", ""},
	}
	for _, c := range cases {
		n, how := NodeOf(c.vm, nodes)
		got := ""
		if n != nil {
			got = n.Name
		}
		if got != c.wantNode || how != c.wantHow {
			t.Errorf("%s: matched %q by %q, want %q by %q", c.name, got, how, c.wantNode, c.wantHow)
		}
	}
}

func TestFoundName(t *testing.T) {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-b"}}
	if got := (Found{VM: &vsphere.VMInfo{VM: vsphere.VM{Name: "WIN-B-VM"}}, Node: &n}).Name(); got != "win-b" {
		t.Errorf("with a Node: %q, want the Node's name", got)
	}
	if got := (Found{VM: &vsphere.VMInfo{VM: vsphere.VM{Name: "WIN-B-VM"}}}).Name(); got != "win-b-vm" {
		t.Errorf("without a Node: %q, want the VM's name in lower case", got)
	}
}
