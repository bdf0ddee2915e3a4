package networking

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// windowsPath is an absolute Windows path: a drive, then backslashes only.
var windowsPath = regexp.MustCompile(`^[A-Z]:\\[^/]+$`)

func testSpec() Spec {
	return Spec{Namespace: "kube-system", HostProcessImage: DefaultHostProcessImage, APIServer: "https://10.0.0.10:6443",
		ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", Labels: map[string]string{"app.kubernetes.io/managed-by": "test"}}
}

// TestUnitModesConsistent holds every registered mode to what the packages
// that ask it rely on: a name Lookup finds, agents whose objects match them
// and whose DaemonSets tell the modes apart (import), host programs and
// files at absolute Windows paths, a CNI configuration exactly when it has
// a place, Windows' VXLAN settings or none, and a refusal exactly when the
// mode's agents come from windows_node_networking.
func TestUnitModesConsistent(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("Names() = %v, want sorted and unique", names)
	}
	if m, ok := Lookup(Default().Name()); !ok || m != Default() {
		t.Errorf("the default mode %q is not registered", Default().Name())
	}
	if len(Default().Agents()) != 0 {
		t.Errorf("the default mode %q installs agents: a node without windows_node_networking could not join", Default().Name())
	}
	daemonSets := map[string]string{} // DaemonSet -> mode
	selectors := map[string]string{}  // selector -> agent
	for _, m := range Modes() {
		name := m.Name()
		t.Run(name, func(t *testing.T) {
			if got, ok := Lookup(name); !ok || got != m {
				t.Errorf("Lookup(%q) does not find the mode", name)
			}
			if strings.ToLower(name) != name || strings.ContainsAny(name, " \"'") {
				t.Errorf("name %q is not a lower-case word", name)
			}
			agents := m.Agents()
			for _, a := range agents {
				if a.Name == "" || a.DaemonSet == "" || len(a.Selector) == 0 {
					t.Errorf("agent %+v lacks a name, a DaemonSet or a selector", a)
				}
				if other, dup := daemonSets[a.DaemonSet]; dup {
					t.Errorf("DaemonSet %s belongs to %s and %s: import could not tell them apart", a.DaemonSet, other, name)
				}
				daemonSets[a.DaemonSet] = name
				sel := fmt.Sprint(a.Selector)
				if other, dup := selectors[sel]; dup {
					t.Errorf("agents %s and %s select the same pods (%s): a node's wait could not tell them apart", other, a.DaemonSet, sel)
				}
				selectors[sel] = a.DaemonSet
			}
			if len(agents) > 0 {
				ds := make([]string, 0, len(agents))
				for _, a := range agents {
					ds = append(ds, a.DaemonSet)
				}
				if got := ByDaemonSets(ds); got != m {
					t.Errorf("ByDaemonSets(%v) = %s, want %s", ds, got.Name(), name)
				}
			}
			objs, err := m.Objects(testSpec())
			if err != nil {
				t.Fatalf("Objects: %v", err)
			}
			if len(objs) != len(agents) {
				t.Fatalf("Objects renders %d agents, Agents lists %d", len(objs), len(agents))
			}
			for i, o := range objs {
				a := agents[i]
				if !reflect.DeepEqual(o.Agent, a) {
					t.Errorf("object %d is for agent %+v, Agents()[%d] is %+v", i, o.Agent, i, a)
				}
				if o.ServiceAccount == nil || o.ClusterRoleBinding == nil || o.ConfigMap == nil || o.DaemonSet == nil {
					t.Fatalf("agent %s lacks a ServiceAccount, ClusterRoleBinding, ConfigMap or DaemonSet", a.Name)
				}
				if *o.DaemonSet.Name != a.DaemonSet || *o.DaemonSet.Namespace != testSpec().Namespace {
					t.Errorf("agent %s renders DaemonSet %s/%s", a.DaemonSet, *o.DaemonSet.Namespace, *o.DaemonSet.Name)
				}
				spec := o.DaemonSet.Spec
				if !reflect.DeepEqual(spec.Selector.MatchLabels, a.Selector) {
					t.Errorf("DaemonSet %s selects %v, the agent's pods are found by %v", a.DaemonSet, spec.Selector.MatchLabels, a.Selector)
				}
				for k, v := range a.Selector {
					if spec.Template.Labels[k] != v {
						t.Errorf("DaemonSet %s's pods lack the selector label %s=%s", a.DaemonSet, k, v)
					}
				}
				for _, labels := range []map[string]string{o.ServiceAccount.Labels, o.ConfigMap.Labels, o.DaemonSet.Labels, o.ClusterRoleBinding.Labels} {
					if labels["app.kubernetes.io/managed-by"] != "test" || labels[LabelComponent] != a.Name {
						t.Errorf("agent %s: an object is labelled %v, without the spec's labels and its component", a.Name, labels)
					}
				}
			}

			for _, p := range m.HostPrograms() {
				if !windowsPath.MatchString(p) || !strings.HasSuffix(p, ".exe") {
					t.Errorf("host program %q is not an absolute Windows path to an .exe", p)
				}
			}
			conf, err := m.CNIConfig(Node{ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12", ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"})
			switch path := m.CNIConfPath(); {
			case err != nil:
				t.Errorf("CNIConfig: %v", err)
			case path == "" && conf != nil:
				t.Errorf("a CNI configuration without a place to write it")
			case path != "" && (!windowsPath.MatchString(path) || !strings.HasPrefix(path, CNIConfDir+`\`) || !strings.HasSuffix(path, ".conflist")):
				t.Errorf("CNI configuration path %q is not a .conflist in %s", path, CNIConfDir)
			case path != "" && !json.Valid(conf):
				t.Errorf("CNI configuration is not JSON: %s", conf)
			case path != "" && !m.NeedsClusterCIDR():
				t.Errorf("writes a CNI configuration (which excepts the pod network from NAT) without needing the cluster CIDR")
			}
			checkArtifacts(t, m)
			checkAttributes(t, m)
			if pr := m.Probe(); pr.PodNetwork == "" || (pr.Unproven != "") != (len(agents) == 0) {
				t.Errorf("Probe() = %+v: every mode names its pod network, and warns that nothing proves it exactly when it installs no agents", pr)
			}
			if m.Plugin() == "" {
				if p, err := m.Detect(context.Background(), emptyCluster{}); p != nil || err != nil {
					t.Errorf("extends no plugin but Detect = %+v, %v", p, err)
				}
			}
			if p := m.Plugin(); p != "" && !slices.Contains([]string{PluginFlannel, PluginCalico, PluginAntrea}, p) {
				t.Errorf("extends plugin %q, which discovery does not recognise", p)
			}
		})
	}
}

// TestUnitByDaemonSets: a namespace with no mode's DaemonSets runs the
// default mode; one with another's (not the provider's) too.
func TestUnitByDaemonSets(t *testing.T) {
	for _, names := range [][]string{nil, {"calico-node"}} {
		if got := ByDaemonSets(names); got != Default() {
			t.Errorf("ByDaemonSets(%v) = %s, want %s", names, got.Name(), Default().Name())
		}
	}
}

func TestUnitGetUnknown(t *testing.T) {
	if _, err := Get("weave"); err == nil || !strings.Contains(err.Error(), strings.Join(Names(), ", ")) {
		t.Errorf("Get(weave) = %v, want an error listing %v", err, Names())
	}
}

// TestUnitCheckMode: flannel's plan refuses a cluster running another
// plugin and a flannel Windows cannot join; none judges nothing.
func TestUnitCheckMode(t *testing.T) {
	flannel, _ := Lookup("flannel")
	calico := Plugin{Name: PluginCalico, Source: "DaemonSet calico-system/calico-node"}
	pass, fail := Verdict{Status: VerdictPass}, Verdict{Status: VerdictFail, Message: "VNI 1", Remedy: "set VNI 4096"}
	if p := CheckMode(flannel, calico, pass); len(p) != 1 || !strings.Contains(p[0].Detail, `cni = "none"`) {
		t.Errorf("flannel on Calico: %+v, want one problem telling to set cni = \"none\"", p)
	}
	if p := CheckMode(flannel, Plugin{Name: PluginFlannel}, fail); len(p) != 1 || !strings.Contains(p[0].Detail, "set VNI 4096") {
		t.Errorf("flannel on a failing flannel: %+v, want the check's remedy", p)
	}
	if p := CheckMode(flannel, Plugin{Name: PluginUnknown}, Verdict{Status: VerdictWarn}); len(p) != 0 {
		t.Errorf("flannel on an unknown plugin: %+v, want no problem (the check only warns)", p)
	}
	if p := CheckMode(Default(), calico, fail); len(p) != 0 {
		t.Errorf("%s: %+v, want no problem", Default().Name(), p)
	}
}
