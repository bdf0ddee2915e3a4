package kube

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

func node(name string, labels map[string]string, podCIDR string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{PodCIDR: podCIDR}}
}

func linuxNode(name, cpu, memory string) corev1.Node {
	n := node(name, map[string]string{LabelOS: "linux"}, "10.244.0.0/24")
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return n
}

func pod(nodeName, cpu, memory string) corev1.Pod {
	return corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}},
	}}}}
}

func daemonSet(namespace, name string, spec corev1.PodSpec) appsv1.DaemonSet {
	return appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: spec}},
	}
}

// expectCheck finds the check with id and verifies its status and that its
// message and remedy contain the given fragments.
func expectCheck(t *testing.T, checks []Check, id, status string, fragments ...string) Check {
	t.Helper()
	for _, c := range checks {
		if c.ID != id {
			continue
		}
		if c.Status != status {
			t.Errorf("check %s: status %s, want %s (message: %s)", id, c.Status, status, c.Message)
		}
		text := c.Message + "\n" + c.Remedy
		for _, f := range fragments {
			if !strings.Contains(text, f) {
				t.Errorf("check %s: %q not in message/remedy:\n%s", id, f, text)
			}
		}
		if status != StatusPass && c.Remedy == "" && id != CheckVersionSkew {
			t.Errorf("check %s: status %s without a remedy", id, status)
		}
		return c
	}
	t.Fatalf("no check %s in %+v", id, checks)
	return Check{}
}

func TestCheckNodeCIDRAllocation(t *testing.T) {
	network := ClusterNetwork{ClusterCIDRs: []string{"10.244.0.0/16"}}
	cases := map[string]struct {
		cl        Cluster
		status    string
		fragments []string
	}{
		"all allocated": {Cluster{Nodes: []corev1.Node{node("a", nil, "10.244.1.0/24")}}, StatusPass, []string{"All 1 nodes", "10.244.1.0/24"}},
		"missing": {
			Cluster{Network: network, Nodes: []corev1.Node{node("a", nil, "10.244.1.0/24"), node("b", nil, ""), node("c", nil, "")}},
			StatusFail, []string{"2 of 3 nodes", "b, c", "--allocate-node-cidrs=true --cluster-cidr=10.244.0.0/16", "podSubnet"},
		},
		"missing with calico": {
			Cluster{CNI: CNI{Name: networking.PluginCalico}, Nodes: []corev1.Node{node("b", nil, "")}}, StatusWarn, []string{"Calico"},
		},
		"no nodes": {Cluster{}, StatusWarn, []string{"no nodes yet", "--allocate-node-cidrs=true"}},
		"no nodes, flag on": {
			Cluster{ControllerManagerFlags: map[string]string{"allocate-node-cidrs": "true"}}, StatusPass, nil,
		},
		"no nodes, flag off": {
			Cluster{ControllerManagerFlags: map[string]string{"allocate-node-cidrs": "false"}}, StatusFail, []string{"--allocate-node-cidrs=false"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectCheck(t, []Check{tc.cl.checkNodeCIDRAllocation()}, CheckNodeCIDRAllocation, tc.status, tc.fragments...)
		})
	}
}

func TestCheckCNI(t *testing.T) {
	flannel := func(netConf string) Cluster {
		f, err := networking.ParseFlannelNetConf(netConf)
		if err != nil {
			t.Fatal(err)
		}
		f.ConfigMap = "kube-flannel/kube-flannel-cfg"
		return Cluster{CNI: CNI{Name: networking.PluginFlannel, Config: f}, DaemonSets: []appsv1.DaemonSet{daemonSet("kube-flannel", "kube-flannel-ds", corev1.PodSpec{})}}
	}
	cases := map[string]struct {
		cl        Cluster
		status    string
		fragments []string
	}{
		"windows vxlan": {flannel(`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}`), StatusPass, []string{"VNI 4096 and port 4789"}},
		"default vxlan": {flannel(`{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}`), StatusFail, []string{
			"VNI 1 and port 8472", "kube-flannel/kube-flannel-cfg", "net-conf.json", `"VNI": 4096, "Port": 4789`,
			"kubectl -n kube-flannel rollout restart daemonset kube-flannel-ds",
		}},
		"wrong port only": {flannel(`{"Backend":{"Type":"vxlan","VNI":4096}}`), StatusFail, []string{"port 8472"}},
		"host-gw":         {flannel(`{"Backend":{"Type":"host-gw"}}`), StatusPass, []string{"l2bridge"}},
		"no backend":      {flannel(`{"Network":"10.244.0.0/16"}`), StatusFail, []string{"udp backend"}},
		"calico unread":   {Cluster{CNI: CNI{Name: networking.PluginCalico, Source: "DaemonSet calico-system/calico-node"}}, StatusWarn, []string{"Calico", "cannot be checked"}},
		"unknown":         {Cluster{CNI: CNI{Name: networking.PluginUnknown}}, StatusWarn, []string{"unknown"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectCheck(t, []Check{tc.cl.checkCNI()}, CheckCNI, tc.status, tc.fragments...)
		})
	}
}

func TestCheckLinuxDaemonSets(t *testing.T) {
	exists := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	affinity := func(op corev1.NodeSelectorOperator, values ...string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: LabelOS, Operator: op, Values: values}}}},
		}}}
	}
	cl := Cluster{DaemonSets: []appsv1.DaemonSet{
		daemonSet("kube-system", "kube-proxy", corev1.PodSpec{Tolerations: exists}),
		daemonSet("kube-system", "os-equal", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}}),
		daemonSet("kube-system", "node-exporter", corev1.PodSpec{}),
		daemonSet("kube-system", "other-taint", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}),
		daemonSet("kube-system", "selected", corev1.PodSpec{NodeSelector: map[string]string{LabelOS: "linux"}, Tolerations: exists}),
		daemonSet("kube-system", "beta-selected", corev1.PodSpec{NodeSelector: map[string]string{"beta.kubernetes.io/os": "linux"}}),
		daemonSet("kube-system", "affinity-in", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorOpIn, "linux"), Tolerations: exists}),
		daemonSet("kube-system", "affinity-notin", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorOpNotIn, "windows")}),
		daemonSet("kube-system", "windows-exporter", corev1.PodSpec{NodeSelector: map[string]string{LabelOS: "windows"}, Tolerations: exists}),
		daemonSet("kube-system", "both-oses", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorOpIn, "linux", "windows")}),
	}}
	checks := cl.checkLinuxDaemonSets(nil)
	expectCheck(t, checks, "linux-daemonset:kube-system/kube-proxy", StatusFail,
		"kube-system/kube-proxy", "os=windows:NoSchedule", "operator: Exists with no key",
		`kubectl -n kube-system patch daemonset kube-proxy --type merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}'`,
		"windows_linux_daemonset_guard")
	expectCheck(t, checks, "linux-daemonset:kube-system/os-equal", StatusFail)
	expectCheck(t, checks, "linux-daemonset:kube-system/node-exporter", StatusWarn, "only the os=windows:NoSchedule taint")
	expectCheck(t, checks, "linux-daemonset:kube-system/other-taint", StatusWarn)
	for _, name := range []string{"selected", "beta-selected", "affinity-in", "affinity-notin"} {
		expectCheck(t, checks, "linux-daemonset:kube-system/"+name, StatusPass)
	}
	for _, c := range checks {
		if c.ID == "linux-daemonset:kube-system/windows-exporter" || c.ID == "linux-daemonset:kube-system/both-oses" {
			t.Errorf("a DaemonSet that selects Windows nodes was checked: %+v", c)
		}
	}
}

// A guard planned in the same run (windows_linux_daemonset_guard, by name or
// for a whole namespace) is counted at plan time; others are not.
func TestCheckLinuxDaemonSetsPlannedGuards(t *testing.T) {
	exists := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	cl := Cluster{DaemonSets: []appsv1.DaemonSet{
		daemonSet("kube-system", "kube-proxy", corev1.PodSpec{Tolerations: exists}),
		daemonSet("kube-system", "other", corev1.PodSpec{Tolerations: exists}),
		daemonSet("kube-flannel", "kube-flannel-ds", corev1.PodSpec{Tolerations: exists}),
		daemonSet("monitoring", "node-exporter", corev1.PodSpec{Tolerations: exists}),
	}}
	checks := cl.Checks(CheckOptions{PlannedGuards: []string{"kube-system/kube-proxy", "kube-flannel/*"}})
	expectCheck(t, checks, "linux-daemonset:kube-system/kube-proxy", StatusPass, "windows_linux_daemonset_guard planned in this run")
	expectCheck(t, checks, "linux-daemonset:kube-flannel/kube-flannel-ds", StatusPass, "planned in this run")
	expectCheck(t, checks, "linux-daemonset:kube-system/other", StatusFail, "depends_on")
	expectCheck(t, checks, "linux-daemonset:monitoring/node-exporter", StatusFail)
	// Without planned guards (the checks at create time) they fail.
	expectCheck(t, cl.Checks(CheckOptions{}), "linux-daemonset:kube-system/kube-proxy", StatusFail)
}

func TestCheckLinuxHeadroom(t *testing.T) {
	// Seed 000: 1970m of 2000m requested on a 2-vCPU control plane.
	seed := Cluster{
		Nodes: []corev1.Node{linuxNode("cp", "2", "4Gi"), node("win", map[string]string{LabelOS: "windows"}, "")},
		Pods:  []corev1.Pod{pod("cp", "1", "100Mi"), pod("cp", "970m", "460Mi"), pod("win", "4", "1Gi")},
	}
	expectCheck(t, seed.checkLinuxHeadroom(), "linux-headroom:cp", StatusFail, "1970m of 2000m allocatable CPU (98%)", "560Mi of 4096Mi", "VSPHERE_CONTROL_PLANE_NUM_CPUS")

	warn := Cluster{Nodes: []corev1.Node{linuxNode("cp", "2", "4Gi")}, Pods: []corev1.Pod{pod("cp", "100m", "3600Mi")}}
	expectCheck(t, warn.checkLinuxHeadroom(), "linux-headroom:cp", StatusWarn, "3600Mi of 4096Mi allocatable memory (88%)")

	pass := Cluster{Nodes: []corev1.Node{linuxNode("cp", "4", "8Gi")}, Pods: []corev1.Pod{pod("cp", "1970m", "560Mi")}}
	expectCheck(t, pass.checkLinuxHeadroom(), "linux-headroom:cp", StatusPass, "1970m of 4000m")

	none := Cluster{Nodes: []corev1.Node{node("win", map[string]string{LabelOS: "windows"}, "")}}
	expectCheck(t, none.checkLinuxHeadroom(), CheckLinuxHeadroom, StatusWarn, "no Linux nodes")

	unreported := Cluster{Nodes: []corev1.Node{node("fresh", nil, "")}}
	expectCheck(t, unreported.checkLinuxHeadroom(), "linux-headroom:fresh", StatusWarn, "no allocatable")
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	req := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	spec := corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Resources: req("100m"), RestartPolicy: &always}, // sidecar: runs alongside everything after it
			{Resources: req("900m")},                         // peak while it runs: 900m + 100m
		},
		Containers: []corev1.Container{{Resources: req("200m")}, {Resources: req("300m")}},
		Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
	}
	cpu := func() int64 { reqs := podRequests(&spec); return reqs.Cpu().MilliValue() }
	if got := cpu(); got != 1050 {
		t.Errorf("cpu = %dm, want 1050m (init peak 1000m + overhead 50m)", got)
	}
	spec.InitContainers[1].Resources = req("10m")
	if got := cpu(); got != 650 {
		t.Errorf("cpu = %dm, want 650m (200m + 300m + sidecar 100m + overhead 50m)", got)
	}
}

func TestCheckVersionSkew(t *testing.T) {
	cases := map[string]struct{ kubelet, status, fragment string }{
		"same":          {"v1.36.3", StatusPass, "matches"},
		"older patch":   {"1.36.0", StatusPass, "matches"},
		"three older":   {"v1.33.9", StatusPass, "3 minor version(s) older"},
		"four older":    {"v1.32.0", StatusFail, "4 minor versions older"},
		"newer minor":   {"v1.37.0", StatusFail, "newer than the API server"},
		"newer major":   {"v2.0.0", StatusFail, "newer than the API server"},
		"not a version": {"latest", StatusFail, "not a Kubernetes version"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := checkVersionSkew(tc.kubelet, "v1.36.3")
			expectCheck(t, []Check{c}, CheckVersionSkew, tc.status, tc.fragment)
			if tc.status == StatusFail && !strings.Contains(c.Remedy, "v1.33 to v1.36") && tc.kubelet != "latest" {
				t.Errorf("remedy %q does not name the supported range", c.Remedy)
			}
		})
	}
	expectCheck(t, []Check{checkVersionSkew("v1.36.3", "")}, CheckVersionSkew, StatusWarn)
}

func TestCheckWindowsBuild(t *testing.T) {
	nodes := []WindowsNode{{Name: "win-a", Build: "10.0.17763"}, {Name: "win-b", Build: "10.0.20348"}}
	expectCheck(t, []Check{checkWindowsBuild("10.0.20348", nil)}, CheckWindowsBuild, StatusPass, "Windows Server 2022", "no Windows nodes yet")
	expectCheck(t, []Check{checkWindowsBuild("10.0.20348", nodes[1:])}, CheckWindowsBuild, StatusPass, "matches all 1")
	expectCheck(t, []Check{checkWindowsBuild("10.0.20348", nodes)}, CheckWindowsBuild, StatusWarn, "win-a (10.0.17763)", "windows_runtime_class")
	expectCheck(t, []Check{checkWindowsBuild("10.0.14393", nil)}, CheckWindowsBuild, StatusFail, "older than Windows Server 2019")
	expectCheck(t, []Check{checkWindowsBuild("10.0.30000", nil)}, CheckWindowsBuild, StatusPass, "unlisted release")
}

func TestChecksSkipAndReady(t *testing.T) {
	cl := Cluster{
		Nodes:      []corev1.Node{node("a", nil, "")},
		DaemonSets: []appsv1.DaemonSet{daemonSet("kube-system", "kube-proxy", corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}})},
	}
	checks := cl.Checks(CheckOptions{KubernetesVersion: "v1.36.0", WindowsBuild: "10.0.20348"})
	if Ready(checks) {
		t.Fatal("Ready with a failing check")
	}
	var fce *FailedChecksError
	if err := ChecksFailed(checks); !errors.As(err, &fce) || len(fce.Checks) != 2 ||
		!strings.Contains(err.Error(), "node-cidr-allocation") || !strings.Contains(err.Error(), "Fix: Run kube-controller-manager") {
		t.Fatalf("ChecksFailed = %v", err)
	}
	checks = cl.Checks(CheckOptions{Skip: []string{CheckNodeCIDRAllocation, CheckLinuxDaemonSet}})
	for _, c := range checks {
		if c.ID == CheckNodeCIDRAllocation || strings.HasPrefix(c.ID, CheckLinuxDaemonSet) {
			t.Errorf("skipped check %s was run", c.ID)
		}
	}
	if !Ready(checks) {
		t.Errorf("not Ready after skipping the failing checks: %+v", checks)
	}
	if Skipped("linux-daemonset-extra", []string{CheckLinuxDaemonSet}) {
		t.Error("a family skip matched an ID that merely starts with its name")
	}
}

// A node that registered moments ago and has no pod CIDR yet is being
// allocated one; it must not make the check read "allocation is off" (seen
// when many nodes join at once).
func TestCheckNodeCIDRAllocationGraceForNewNodes(t *testing.T) {
	young := node("just-joined", nil, "")
	young.CreationTimestamp = metav1.Now()
	cl := &Cluster{Nodes: []corev1.Node{node("old", nil, "10.244.1.0/24"), young}}
	if c := cl.checkNodeCIDRAllocation(); c.Status != StatusPass || !strings.Contains(c.Message, "being allocated") {
		t.Errorf("check = %+v, want pass naming the node being allocated", c)
	}
	stale := node("stale", nil, "")
	cl.Nodes = append(cl.Nodes, stale) // zero creation time: registered long ago
	if c := cl.checkNodeCIDRAllocation(); c.Status != StatusFail || !strings.Contains(c.Message, "stale") {
		t.Errorf("check = %+v, want fail naming the stale node", c)
	}
}
