package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
)

// TestAccClusterDataSource_antrea runs Antrea's Linux side on the sandbox's
// control-plane node (antrea.yml's antrea-config, antrea-agent
// ServiceAccount, RBAC and DaemonSet) and reads it through the provider's
// own role: Antrea in encap passes; with WireGuard encryption, then in
// networkPolicyOnly mode, Antrea's Windows agent would not start, and the
// check fails naming the setting and what to set; noEncap passes, as the
// antrea mode's Windows agents follow the cluster's traffic mode.
func TestAccClusterDataSource_antrea(t *testing.T) {
	sb := acctest.RequireSandbox(t, "Antrea's Linux side on the sandbox's control-plane node")
	ctx := context.Background()
	remove, err := sb.LinuxNode.InstallAntrea(ctx, linuxnode.Antrea{Version: "v2.2.0", TrafficEncapMode: "encap", TunnelType: "geneve"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := remove(context.Background()); err != nil {
			t.Errorf("removing Antrea: %v", err)
		}
	})
	k := acctest.Kube(t)
	setConf := func(a linuxnode.Antrea) func() {
		return func() {
			cm, err := k.CoreV1().ConfigMaps(linuxnode.AntreaNamespace).Get(ctx, linuxnode.AntreaConfigMap, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["antrea-agent.conf"] = a.AgentConf()
			if _, err := k.CoreV1().ConfigMaps(linuxnode.AntreaNamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	config := `data "windows_cluster" "test" {}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni").AtMapKey("name"), knownvalue.StringExact("antrea")),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni").AtMapKey("source"), knownvalue.StringExact("DaemonSet kube-system/antrea-agent")),
					expectCheck(clusterAddress, "cni", "pass", `ConfigMap kube-system/antrea-config, key antrea-agent.conf\) uses trafficEncapMode encap with tunnelType geneve.*Release v2.2.0`),
				},
			},
			{
				PreConfig: setConf(linuxnode.Antrea{TrafficEncapMode: "encap", TrafficEncryptionMode: "wireguard"}),
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("ready"), knownvalue.Bool(false)),
					expectCheck(clusterAddress, "cni", "fail", `sets trafficEncryptionMode: wireguard.*unsupported features on Windows: \{TrafficEncryptionMode: wireguard\}.*trafficEncryptionMode to none.*kubectl -n kube-system rollout restart daemonset antrea-agent`),
				},
			},
			{
				PreConfig: setConf(linuxnode.Antrea{TrafficEncapMode: "networkPolicyOnly"}),
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, "cni", "fail", `sets trafficEncapMode: networkPolicyOnly`),
				},
			},
			{
				PreConfig: setConf(linuxnode.Antrea{TrafficEncapMode: "noEncap"}),
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					// Antrea runs noEncap on Windows, and the antrea mode's
					// Windows agents follow the cluster's traffic mode.
					expectCheck(clusterAddress, "cni", "pass", `uses trafficEncapMode noEncap with tunnelType geneve, which its Windows agent supports`),
				},
			},
		},
	})
}

// TestAccNodeNetworking_antrea: against a cluster whose Antrea encrypts its
// traffic with WireGuard (Windows support off: Antrea's Windows agent
// refuses it), the plan of windows_node_networking with cni = "antrea" stops
// naming the setting; once antrea-config says encap without encryption,
// the apply installs antrea-windows-with-ovs.yml's DaemonSet (install-cni
// and install-ovs-driver init containers, antrea-agent and antrea-ovs, the
// antrea-windows image) on a ServiceAccount bound to antrea.yml's ClusterRole
// antrea-agent, and the destroy removes it.
func TestAccNodeNetworking_antrea(t *testing.T) {
	sb := acctest.RequireSandbox(t, "Antrea's Linux side on the sandbox's control-plane node")
	ctx := context.Background()
	remove, err := sb.LinuxNode.InstallAntrea(ctx, linuxnode.Antrea{Version: "v2.2.0", TrafficEncapMode: "encap", TrafficEncryptionMode: "wireguard"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := remove(context.Background()); err != nil {
			t.Errorf("removing Antrea: %v", err)
		}
	})
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "netan")
	config := acctest.NetworkingConfig(ns, "antrea", "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             checkNetworkingDestroyed(t, ns),
		Steps: []resource.TestStep{
			{
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)cannot carry Windows nodes.*trafficEncryptionMode: wireguard.*unsupported features on\s+Windows`),
			},
			{
				PreConfig: func() {
					cm, err := k.CoreV1().ConfigMaps(linuxnode.AntreaNamespace).Get(ctx, linuxnode.AntreaConfigMap, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					cm.Data["antrea-agent.conf"] = linuxnode.Antrea{TrafficEncapMode: "encap", TunnelType: "geneve"}.AgentConf()
					if _, err := k.CoreV1().ConfigMaps(linuxnode.AntreaNamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("antrea").AtMapKey("traffic_encap_mode"), knownvalue.StringExact("encap")),
					statecheck.ExpectKnownValue(networkingAddress, tfjsonpath.New("antrea").AtMapKey("version"), knownvalue.StringExact("v2.2.0")),
				},
				Check: func(*terraform.State) error {
					ds, err := k.AppsV1().DaemonSets(ns).Get(ctx, "antrea-agent-windows", metav1.GetOptions{})
					if err != nil {
						return err
					}
					spec := ds.Spec.Template.Spec
					var inits, ctrs []string
					for _, c := range spec.InitContainers {
						inits = append(inits, c.Name)
					}
					for _, c := range spec.Containers {
						ctrs = append(ctrs, c.Name)
						if c.Image != "antrea/antrea-windows:v2.2.0" {
							return fmt.Errorf("container %s runs %s", c.Name, c.Image)
						}
					}
					if !slices.Equal(inits, []string{"install-cni", "install-ovs-driver"}) || !slices.Equal(ctrs, []string{"antrea-agent", "antrea-ovs"}) {
						return fmt.Errorf("init containers %v, containers %v", inits, ctrs)
					}
					b, err := k.RbacV1().ClusterRoleBindings().Get(ctx, "windows-node-networking:"+ns+":antrea-agent-windows", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if b.RoleRef.Name != "antrea-agent" || len(b.Subjects) != 1 || b.Subjects[0].Name != spec.ServiceAccountName {
						return fmt.Errorf("binding %+v, ServiceAccount %s", b, spec.ServiceAccountName)
					}
					cm, err := k.CoreV1().ConfigMaps(ns).Get(ctx, "antrea-agent-windows", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if conf := cm.Data["antrea-agent.conf"]; !strings.Contains(conf, "kubeAPIServerOverride: \"https://") || !strings.Contains(conf, "proxyAll: true") {
						return fmt.Errorf("antrea-agent.conf:\n%s", conf)
					}
					return nil
				},
			},
		},
	})
}
