package resources_test

import (
	"context"
	"fmt"
	"log"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
)

const clusterAddress = "data.windows_cluster.test"

// secondSandboxTimeout covers starting another control plane from the
// binaries the package's sandbox already built.
const secondSandboxTimeout = 5 * time.Minute

// TestAccClusterDataSource_facts reads what the sandbox's control plane
// publishes, each fact from its primary source.
func TestAccClusterDataSource_facts(t *testing.T) {
	host := acctest.Kube(t).Host()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `data "windows_cluster" "test" {}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("api_endpoint"), knownvalue.StringExact(host)),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("server_version"), knownvalue.StringRegexp(regexp.MustCompile(`^v1\.36\.`))),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("service_cidrs"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("10.96.0.0/12")})),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cluster_cidrs"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("10.244.0.0/16")})),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("dns_service_ip"), knownvalue.StringExact("10.96.0.10")),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cluster_domain"), knownvalue.StringExact("cluster.local")),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("sources"), knownvalue.MapExact(map[string]knownvalue.Check{
					"service_cidrs":  knownvalue.StringExact("ServiceCIDR kubernetes"),
					"cluster_cidrs":  knownvalue.StringExact("kube-system/kubeadm-config networking.podSubnet"),
					"dns_service_ip": knownvalue.StringExact("Service kube-system/kube-dns"),
					"cluster_domain": knownvalue.StringExact("kube-system/kubelet-config clusterDomain"),
				})),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"name": knownvalue.StringExact("unknown"), "source": knownvalue.Null(), "backend": knownvalue.Null(),
					"vni": knownvalue.Null(), "port": knownvalue.Null(),
				})),
				expectCheck(clusterAddress, "cni", "warn", `network plugin is unknown.*Install a network plugin`),
				expectNoCheck(clusterAddress, "version-skew"),
				expectNoCheck(clusterAddress, "windows-build"),
			},
		}},
	})
}

// TestAccClusterDataSource_nodeCIDRAllocationOn registers a node with the
// sandbox, whose controller manager allocates node pod CIDRs.
func TestAccClusterDataSource_nodeCIDRAllocationOn(t *testing.T) {
	k := acctest.Kube(t)
	name := acctest.Name("linux-on")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				createNode(t, k, name, map[string]string{kube.LabelOS: "linux"})
				t.Logf("node %s got pod CIDR %s", name, waitForPodCIDR(t, k, name))
			},
			Config: `data "windows_cluster" "test" {}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("node_cidr_allocation"), knownvalue.Bool(true)),
				expectCheck(clusterAddress, "node-cidr-allocation", "pass", `All \d+ nodes have a pod CIDR`),
			},
		}},
	})
}

// TestAccClusterDataSource_nodeCIDRAllocationOff starts a second control
// plane whose controller manager does not allocate node pod CIDRs (seed
// 001), and points the provider at it.
func TestAccClusterDataSource_nodeCIDRAllocationOff(t *testing.T) {
	acctest.RequireSandbox(t, "a second sandbox whose controller manager allocates no pod CIDRs")
	acctest.PreCheck(t)
	off := false
	ctx, cancel := context.WithTimeout(context.Background(), secondSandboxTimeout)
	defer cancel()
	// log.Printf, not t.Logf: the sandbox may log while stopping, after the test.
	sb := sandboxtest.Start(ctx, t, sandbox.Options{AllocateNodeCIDRs: &off, NoLinuxNode: true, Logf: log.Printf})
	k, err := kube.NewClient(ctx, kube.Config{ConfigPaths: []string{sb.Kubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	name := acctest.Name("linux-off")
	config := fmt.Sprintf(`
provider "windows" {
  kubernetes { config_path = %q }
}

data "windows_cluster" "test" {}
`, sb.ProviderKubeconfig)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				// No nodes and no visible controller-manager flags: unknown.
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("api_endpoint"), knownvalue.StringExact(k.Host())),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("node_cidr_allocation"), knownvalue.Null()),
					expectCheck(clusterAddress, "node-cidr-allocation", "warn", `no nodes yet.*--allocate-node-cidrs=true`),
				},
			},
			{
				PreConfig: func() { createNode(t, k, name, map[string]string{kube.LabelOS: "linux"}) },
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("node_cidr_allocation"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("ready"), knownvalue.Bool(false)),
					expectCheck(clusterAddress, "node-cidr-allocation", "fail",
						`1 of 1 nodes have no pod CIDR \(spec.podCIDR\): `+name+`.*--allocate-node-cidrs=true --cluster-cidr=10\.244\.0\.0/16.*podSubnet`),
				},
				Check: func(*terraform.State) error {
					n, err := k.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if n.Spec.PodCIDR != "" {
						return fmt.Errorf("node %s got pod CIDR %s from a controller manager that should not allocate", name, n.Spec.PodCIDR)
					}
					return nil
				},
			},
			{
				// What users write: the precondition stops the plan with the
				// failing check's message and remedy.
				Config: config + `
resource "terraform_data" "gate" {
  lifecycle {
    precondition {
      condition     = data.windows_cluster.test.ready
      error_message = join("\n", [for c in data.windows_cluster.test.checks : "${c.id}: ${c.message} Fix: ${c.remedy}" if c.status == "fail"])
    }
  }
}
`,
				ExpectError: regexp.MustCompile(`(?s)node-cidr-allocation:.*` + name + `.*Fix:.*--allocate-node-cidrs=true`),
			},
		},
	})
}

// TestAccClusterDataSource_flannel checks flannel's net-conf.json before and
// after it is set up for Windows (seed 004).
func TestAccClusterDataSource_flannel(t *testing.T) {
	k := acctest.Kube(t)
	ctx := context.Background()
	const namespace, name = "kube-flannel", "kube-flannel-cfg"
	setNetConf := func(netConf string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string]string{"net-conf.json": netConf}}
		_, err := k.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			_, err = k.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	config := `data "windows_cluster" "test" {}`
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					_, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
					if err != nil && !apierrors.IsAlreadyExists(err) {
						t.Fatal(err)
					}
					// The ConfigMap only: deleting the namespace would leave it
					// terminating for a later run.
					t.Cleanup(func() {
						_ = k.CoreV1().ConfigMaps(namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
					})
					setNetConf(`{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}}`)
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"name": knownvalue.StringExact("flannel"), "source": knownvalue.StringExact("ConfigMap kube-flannel/kube-flannel-cfg"),
						"backend": knownvalue.StringExact("vxlan"), "vni": knownvalue.Int64Exact(1), "port": knownvalue.Int64Exact(8472),
					})),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("ready"), knownvalue.Bool(false)),
					expectCheck(clusterAddress, "cni", "fail",
						`ConfigMap kube-flannel/kube-flannel-cfg, key net-conf.json\) uses the vxlan backend with VNI 1 and port 8472.*`+
							`"Backend": \{"Type": "vxlan", "VNI": 4096, "Port": 4789\}.*kubectl -n kube-flannel rollout restart daemonset`),
				},
			},
			{
				PreConfig: func() {
					setNetConf(`{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}}`)
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni").AtMapKey("vni"), knownvalue.Int64Exact(4096)),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("cni").AtMapKey("port"), knownvalue.Int64Exact(4789)),
					expectCheck(clusterAddress, "cni", "pass", `VNI 4096 and port 4789`),
				},
			},
		},
	})
}

// TestAccClusterDataSource_linuxDaemonSets: DaemonSets with and without OS
// selectors and with the catch-all toleration kube-proxy and flannel carry.
func TestAccClusterDataSource_linuxDaemonSets(t *testing.T) {
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "ds-checks")
	tolerateAll := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					createDaemonSet(t, k, ns, "kube-proxy", corev1.PodSpec{Tolerations: tolerateAll})
					createDaemonSet(t, k, ns, "node-exporter", corev1.PodSpec{})
					createDaemonSet(t, k, ns, "selected", corev1.PodSpec{NodeSelector: map[string]string{kube.LabelOS: "linux"}, Tolerations: tolerateAll})
					createDaemonSet(t, k, ns, "windows-exporter", corev1.PodSpec{NodeSelector: map[string]string{kube.LabelOS: "windows"}, Tolerations: tolerateAll})
				},
				Config: `data "windows_cluster" "test" {}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("ready"), knownvalue.Bool(false)),
					expectCheck(clusterAddress, "linux-daemonset:"+ns+"/kube-proxy", "fail",
						`tolerates the os=windows:NoSchedule taint \(toleration \{operator: Exists with no key\}\).*`+
							regexp.QuoteMeta(`kubectl -n `+ns+` patch daemonset kube-proxy --type merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}'`)+
							`.*windows_linux_daemonset_guard`),
					expectCheck(clusterAddress, "linux-daemonset:"+ns+"/node-exporter", "warn", `only the os=windows:NoSchedule taint keeps it off`),
					expectCheck(clusterAddress, "linux-daemonset:"+ns+"/selected", "pass", `kept off Windows nodes`),
					expectNoCheck(clusterAddress, "linux-daemonset:"+ns+"/windows-exporter"),
				},
			},
			{
				// An explicit opt-out per check.
				Config: fmt.Sprintf(`data "windows_cluster" "test" {
  skip_checks = ["linux-daemonset:%s/kube-proxy"]
}`, ns),
				ConfigStateChecks: []statecheck.StateCheck{
					expectNoCheck(clusterAddress, "linux-daemonset:"+ns+"/kube-proxy"),
					expectCheck(clusterAddress, "linux-daemonset:"+ns+"/node-exporter", "warn", `.`),
				},
			},
		},
	})
}

// TestAccClusterDataSource_linuxHeadroom fills an undersized Linux node up
// to seed 000's 1970m of 2000m.
func TestAccClusterDataSource_linuxHeadroom(t *testing.T) {
	k := acctest.Kube(t)
	ns := createNamespace(t, k, "headroom")
	node := acctest.Name("small-cp")
	id := "linux-headroom:" + node
	config := `data "windows_cluster" "test" {}`
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					createNode(t, k, node, map[string]string{kube.LabelOS: "linux"})
					setAllocatable(t, k, node, "2000m", "4Gi")
					bindPod(t, k, ns, node, "1000m", "512Mi")
				},
				Config:            config,
				ConfigStateChecks: []statecheck.StateCheck{expectCheck(clusterAddress, id, "pass", `1000m of 2000m allocatable CPU \(50%\) and 512Mi of 4096Mi`)},
			},
			{
				PreConfig:         func() { bindPod(t, k, ns, node, "750m", "48Mi") },
				Config:            config,
				ConfigStateChecks: []statecheck.StateCheck{expectCheck(clusterAddress, id, "warn", `1750m of 2000m allocatable CPU \(88%\).*more CPU`)},
			},
			{
				PreConfig: func() { bindPod(t, k, ns, node, "220m", "0") },
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, id, "fail", `1970m of 2000m allocatable CPU \(98%\).*stay Pending.*Give node `+node+` more CPU`),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("ready"), knownvalue.Bool(false)),
				},
			},
		},
	})
}

// TestAccClusterDataSource_versionSkew checks the kubelet version about to
// be installed against the sandbox's v1.36 API server.
func TestAccClusterDataSource_versionSkew(t *testing.T) {
	config := func(version string) string {
		return fmt.Sprintf(`data "windows_cluster" "test" {
  kubernetes_version = %q
}`, version)
	}
	step := func(version, status, pattern string) resource.TestStep {
		return resource.TestStep{
			Config: config(version),
			ConfigStateChecks: []statecheck.StateCheck{
				expectCheck(clusterAddress, "version-skew", status, pattern),
				statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("ready"), knownvalue.Bool(status == "pass")),
			},
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			step("v1.36.3", "pass", `matches the API server v1\.36`),
			step("v1.33.0", "pass", `3 minor version\(s\) older`),
			step("v1.37.0", "fail", `newer than the API server.*Set kubernetes_version to a v1\.36\.x release`),
			step("v1.32.5", "fail", `4 minor versions older.*v1\.33 to v1\.36`),
		},
	})
}

// TestAccClusterDataSource_windowsBuild compares the build about to be added
// with Kubernetes' minimum and with an existing Windows node.
func TestAccClusterDataSource_windowsBuild(t *testing.T) {
	k := acctest.Kube(t)
	node := acctest.Name("win-2019")
	config := func(build string) string {
		return fmt.Sprintf(`data "windows_cluster" "test" {
  windows_build = %q
}`, build)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("10.0.20348"),
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, "windows-build", "pass", `Windows Server 2022.*no Windows nodes yet`),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("windows_nodes"), knownvalue.ListExact(nil)),
				},
			},
			{
				Config: config("10.0.14393"), // Windows Server 2016
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, "windows-build", "fail", `older than Windows Server 2019.*2022 \(10\.0\.20348\)`),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("ready"), knownvalue.Bool(false)),
				},
			},
			{
				PreConfig: func() {
					createNode(t, k, node, map[string]string{kube.LabelOS: "windows", kube.LabelWindowsBuild: "10.0.17763"})
				},
				Config: config("10.0.20348"),
				ConfigStateChecks: []statecheck.StateCheck{
					expectCheck(clusterAddress, "windows-build", "warn", node+` \(10\.0\.17763\).*windows_runtime_class`),
					statecheck.ExpectKnownValue(clusterAddress, tfjsonpath.New("windows_nodes"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"name": knownvalue.StringExact(node), "windows_build": knownvalue.StringExact("10.0.17763"),
							"ready": knownvalue.Bool(false), "kubelet_version": knownvalue.Null(),
						}),
					})),
				},
			},
			{
				Config:            config("10.0.17763"),
				ConfigStateChecks: []statecheck.StateCheck{expectCheck(clusterAddress, "windows-build", "pass", `Windows Server 2019.*matches all 1`)},
			},
		},
	})
}

// TestAccClusterDataSource_precondition is the documented use: a failing
// check stops the plan with its message and remedy; a passing one lets it go.
func TestAccClusterDataSource_precondition(t *testing.T) {
	config := func(version string) string {
		return fmt.Sprintf(`
data "windows_cluster" "test" {
  kubernetes_version = %q
}

resource "terraform_data" "gate" {
  lifecycle {
    precondition {
      condition     = data.windows_cluster.test.ready
      error_message = join("\n", [for c in data.windows_cluster.test.checks : "${c.id}: ${c.message} Fix: ${c.remedy}" if c.status == "fail"])
    }
  }
}`, version)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("v1.37.0"), ExpectError: regexp.MustCompile(`(?s)version-skew: The kubelet v1\.37\.0 would be newer.*Fix: Set\s+kubernetes_version`)},
			{Config: config("v1.36.3")},
		},
	})
}
