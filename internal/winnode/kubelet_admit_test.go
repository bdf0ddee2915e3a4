package winnode

import (
	"slices"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
)

// TestKubeletAdmit: the kubelet's rule admits the API servers' advertised
// addresses and the pod network; without readable endpoints, the API
// endpoint's address when it is one; with neither, the join is refused
// naming the Role that lists them.
func TestKubeletAdmit(t *testing.T) {
	cases := []struct {
		name    string
		net     kube.ClusterNetwork
		cfg     bootstrap.JoinConfig
		want    []string
		wantErr string
	}{
		{"endpoints-and-pods", kube.ClusterNetwork{APIServerAddresses: []string{"10.0.0.11", "10.0.0.12"}, ClusterCIDRs: []string{"10.244.0.0/16"}},
			bootstrap.JoinConfig{APIServer: "https://lb.example.com:6443"}, []string{"10.0.0.11", "10.0.0.12", "10.244.0.0/16"}, ""},
		{"user-cluster-cidr-wins", kube.ClusterNetwork{APIServerAddresses: []string{"10.0.0.11"}, ClusterCIDRs: []string{"10.244.0.0/16"}},
			bootstrap.JoinConfig{APIServer: "https://10.0.0.11:6443", ClusterCIDR: "192.168.0.0/16"}, []string{"10.0.0.11", "192.168.0.0/16"}, ""},
		{"endpoint-ip-fallback", kube.ClusterNetwork{ClusterCIDRs: []string{"10.244.0.0/16"}},
			bootstrap.JoinConfig{APIServer: "https://10.0.0.10:6443"}, []string{"10.0.0.10", "10.244.0.0/16"}, ""},
		{"nothing-known", kube.ClusterNetwork{ClusterCIDRs: []string{"10.244.0.0/16"}},
			bootstrap.JoinConfig{APIServer: "https://lb.example.com:6443"}, nil, "default namespace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := kubeletAdmit(&tc.net, tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("kubeletAdmit = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestManagementAddress: the address the provider reaches a guest from is
// its routing's source address for the guest (on loopback, 127.0.0.1:
// the local route's src).
func TestManagementAddress(t *testing.T) {
	got, err := managementAddress("127.1.2.3")
	if err != nil || got != "127.0.0.1" {
		t.Fatalf("managementAddress(127.1.2.3) = %q, %v; want 127.0.0.1", got, err)
	}
}
