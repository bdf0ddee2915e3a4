package kube

import (
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/goldenfile"

	"sigs.k8s.io/yaml"
)

// golden compares got with testdata/<name> (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func testSpec() NetworkingSpec {
	return NetworkingSpec{Namespace: "kube-system", Mode: "flannel", APIServer: "https://10.0.0.10:6443",
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12"}
}

// TestNetworkingFlannelManifests renders the flannel mode's objects as YAML
// (what kubectl would show) and their start scripts as files.
func TestNetworkingFlannelManifests(t *testing.T) {
	objs, err := testSpec().Render()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range objs.agents {
		for _, o := range []any{a.ServiceAccount, a.ClusterRole, a.ClusterRoleBinding, a.ConfigMap, a.DaemonSet} {
			y, err := yaml.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			if string(y) == "null\n" {
				continue
			}
			b.WriteString("---\n" + string(y))
		}
		golden(t, a.Agent.DaemonSet+"-start.ps1", a.ConfigMap.Data["start.ps1"])
	}
	golden(t, "networking-flannel.yaml", b.String())
	if got := objs.Names(); len(got) != 9 {
		t.Errorf("flannel mode owns %d objects, want 9: %v", len(got), got)
	}
}

func TestNetworkingScriptsCheckExitCodes(t *testing.T) {
	objs, err := testSpec().Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range objs.agents {
		script := a.ConfigMap.Data["start.ps1"]
		lines := strings.Split(script, "\n")
		for i, l := range lines {
			// A native program run with & must be followed by a check of
			// $LASTEXITCODE (or hand it on with exit).
			if !strings.Contains(l, "& '") {
				continue
			}
			rest := strings.Join(lines[i:min(i+2, len(lines))], "\n")
			if !strings.Contains(rest, "$LASTEXITCODE") {
				t.Errorf("%s line %d runs a native program without checking $LASTEXITCODE: %s", a.Agent.DaemonSet, i+1, l)
			}
		}
		if strings.Contains(script, "Remove-Service") {
			t.Errorf("%s uses Remove-Service, which Windows PowerShell 5.1 lacks", a.Agent.DaemonSet)
		}
	}
}

func TestNetworkingValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*NetworkingSpec)
		want string
	}{
		{"unknown mode", func(s *NetworkingSpec) { s.Mode = "weave" }, `unknown CNI mode "weave"`},
		{"flannel without cluster CIDR", func(s *NetworkingSpec) { s.ClusterCIDR = "" }, "needs the cluster (pod) CIDR"},
		{"http API server", func(s *NetworkingSpec) { s.APIServer = "http://x" }, "not an https URL"},
		{"none needs nothing", func(s *NetworkingSpec) { *s = NetworkingSpec{Namespace: "kube-system", Mode: "none"} }, ""},
	} {
		s := testSpec()
		tc.edit(&s)
		_, err := s.Render()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	objs, err := NetworkingSpec{Namespace: "kube-system", Mode: "none"}.Render()
	if err != nil || len(objs.Agents()) != 0 || len(objs.Names()) != 0 {
		t.Errorf("none mode: %v, %v, %v; want no agents and no objects", err, objs.Agents(), objs.Names())
	}
}

// TestNetworkingAntreaManifests renders the antrea mode's objects as YAML:
// antrea-windows-with-ovs.yml's DaemonSet, its scripts and configuration in
// one ConfigMap, a ServiceAccount bound to antrea.yml's ClusterRole.
func TestNetworkingAntreaManifests(t *testing.T) {
	s := testSpec()
	s.Mode = "antrea"
	objs, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range objs.agents {
		if a.ClusterRole != nil {
			t.Errorf("the antrea mode makes a ClusterRole; it binds antrea.yml's antrea-agent")
		}
		for _, o := range []any{a.ServiceAccount, a.ClusterRole, a.ClusterRoleBinding, a.ConfigMap, a.DaemonSet} {
			y, err := yaml.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			if string(y) == "null\n" {
				continue
			}
			b.WriteString("---\n" + string(y))
		}
		for _, script := range []string{"Install-WindowsCNI.ps1", "Install-OVSDriver.ps1", "Run-AntreaAgent.ps1", "Run-AntreaOVS.ps1"} {
			golden(t, "antrea-agent-windows-"+script, a.ConfigMap.Data[script])
		}
	}
	golden(t, "networking-antrea.yaml", b.String())
	if got := objs.Names(); len(got) != 4 {
		t.Errorf("antrea mode owns %d objects, want 4: %v", len(got), got)
	}
}

// TestNetworkingCalicoManifests renders the calico mode's objects and start
// scripts, and holds its scripts to the same exit-code rule.
func TestNetworkingCalicoManifests(t *testing.T) {
	spec := testSpec()
	spec.Mode = "calico"
	objs, err := spec.Render()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range objs.agents {
		for _, o := range []any{a.ServiceAccount, a.ClusterRole, a.ClusterRoleBinding, a.ConfigMap, a.DaemonSet} {
			y, err := yaml.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			if string(y) == "null\n" {
				continue
			}
			b.WriteString("---\n" + string(y))
		}
		script := a.ConfigMap.Data["start.ps1"]
		golden(t, a.Agent.DaemonSet+"-start.ps1", script)
		lines := strings.Split(script, "\n")
		for i, l := range lines {
			if strings.Contains(l, "& '") && !strings.Contains(strings.Join(lines[i:min(i+2, len(lines))], "\n"), "$LASTEXITCODE") {
				t.Errorf("%s line %d runs a native program without checking $LASTEXITCODE: %s", a.Agent.DaemonSet, i+1, l)
			}
		}
	}
	golden(t, "networking-calico.yaml", b.String())
	// kube-proxy: ServiceAccount, binding, ConfigMap, DaemonSet; calico-node
	// adds its ClusterRole.
	if got := objs.Names(); len(got) != 9 {
		t.Errorf("calico mode owns %d objects, want 9: %v", len(got), got)
	}
}
