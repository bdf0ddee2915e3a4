package resources

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// fakeMode is a networking mode that exists only in this file: it extends a
// "fake" plugin recognised by ConfigMap kube-system/fake-net (key
// encapsulation, which must be "vxlan" for Windows), writes its own CNI
// configuration, needs one program the image installs from an archive, and
// reports the plugin's MTU as a computed attribute.
type fakeMode struct{}

const fakeProgram = `C:\k\fake-agent.exe`

func (fakeMode) Name() string                                               { return "fake" }
func (fakeMode) Agents() []networking.Agent                                 { return nil }
func (fakeMode) Objects(networking.Spec) ([]networking.AgentObjects, error) { return nil, nil }
func (fakeMode) NeedsClusterCIDR() bool                                     { return true }
func (fakeMode) Plugin() string                                             { return "fake" }
func (fakeMode) CNIConfPath() string                                        { return networking.CNIConfDir + `\10-fake.conflist` }
func (fakeMode) HostPrograms() []string                                     { return []string{fakeProgram} }
func (fakeMode) Probe() networking.Probe                                    { return networking.Probe{PodNetwork: "the fake tunnel"} }

func (fakeMode) Detect(ctx context.Context, r networking.ClusterReader) (*networking.Plugin, error) {
	data, found, err := r.ConfigMap(ctx, "kube-system", "fake-net")
	if err != nil || !found {
		return nil, err
	}
	return &networking.Plugin{Name: "fake", Source: "ConfigMap kube-system/fake-net", Config: data,
		PodNetworks: []string{data["network"]}, PodNetworksSource: "kube-system/fake-net network"}, nil
}

func (fakeMode) CheckPlugin(p networking.Plugin, _ func(string) []string) networking.Verdict {
	if enc := p.Config.(map[string]string)["encapsulation"]; enc != "vxlan" {
		return networking.Verdict{Status: networking.VerdictFail,
			Message: "fake (ConfigMap kube-system/fake-net, key encapsulation) uses " + enc + ", which Windows cannot join.",
			Remedy:  "Set encapsulation: vxlan in ConfigMap kube-system/fake-net."}
	}
	return networking.Verdict{Status: networking.VerdictPass, Message: "fake uses vxlan."}
}

func (fakeMode) CNIConfig(n networking.Node) ([]byte, error) {
	return json.Marshal(map[string]any{"cniVersion": "0.3.0", "name": "fake", "plugins": []any{
		map[string]any{"type": "fake", "ipam": map[string]any{"type": "host-local", "subnet": n.ClusterCIDR}},
	}})
}

func (fakeMode) Artifacts() []networking.Artifact {
	return []networking.Artifact{{Name: "agent", InstallAs: fakeProgram, Member: "bin/fake-agent.exe", Required: true,
		Description: "The fake agent's archive."}}
}

func (fakeMode) Attributes(p *networking.Plugin) []networking.Attribute {
	mtu := int64(0)
	if p != nil && p.Config != nil {
		if p.Config.(map[string]string)["mtu"] == "1450" {
			mtu = 1450
		}
	}
	return []networking.Attribute{{Name: "mtu", Kind: networking.AttributeInt64, Int64: mtu, Description: "The fake plugin's MTU."}}
}

// TestUnitFakeMode proves a mode needs nothing outside its own file: a mode
// registered from this test flows through discovery (the cluster's plugin
// and pod network), the plan's checks (a refusal naming the setting), the
// golden image's schema and downloads, windows_node_networking's schema
// and computed attributes, and the join's rendering (its CNI configuration
// written, its program required).
func TestUnitFakeMode(t *testing.T) {
	networking.RegisterForTest(t, fakeMode{})
	ctx := context.Background()

	// Discovery, through the kube client, against a cluster holding the
	// fake plugin's ConfigMap with an encapsulation Windows cannot join.
	cs := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "fake-net"},
		Data: map[string]string{"encapsulation": "ipip", "network": "10.250.0.0/16", "mtu": "1450"}})
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.36.3"}
	k := &kube.Client{Interface: cs, REST: &rest.Config{Host: "https://127.0.0.1:6443"}}
	cluster, err := k.DiscoverCluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cluster.CNI.Name != "fake" || cluster.Network.ClusterCIDRs[0] != "10.250.0.0/16" || cluster.Network.Sources.ClusterCIDRs != "kube-system/fake-net network" {
		t.Errorf("discovery: plugin %+v, cluster CIDRs %v from %q; want the fake plugin's network", cluster.CNI, cluster.Network.ClusterCIDRs, cluster.Network.Sources.ClusterCIDRs)
	}

	// The plan's checks: the readiness check and windows_node_networking's.
	c := cluster.CNICheck()
	problems := networking.CheckMode(fakeMode{}, cluster.CNI, networking.Verdict{Status: c.Status, Message: c.Message, Remedy: c.Remedy})
	if c.Status != networking.VerdictFail || len(problems) != 1 || !strings.Contains(problems[0].Detail, "key encapsulation") {
		t.Errorf("plan checks: readiness %+v, problems %+v; want a refusal naming the setting", c, problems)
	}
	flannel, _ := networking.Lookup("flannel")
	if p := networking.CheckMode(flannel, cluster.CNI, networking.Verdict{}); len(p) != 1 || !strings.Contains(p[0].Detail, "runs fake") {
		t.Errorf("flannel on the fake plugin: %+v, want the plan to name the cluster's plugin", p)
	}

	// windows_node_networking: the mode's value and its nested attribute.
	s := nodeNetworkingSchema(ctx)
	nested, ok := s.Attributes["fake"].(schema.SingleNestedAttribute)
	if !ok || nested.Attributes["mtu"] == nil {
		t.Fatalf("windows_node_networking lacks fake = { mtu }: %v", s.Attributes["fake"])
	}
	if err := s.ValidateImplementation(ctx); err != nil {
		t.Errorf("schema: %v", err)
	}
	vals, diags := modeAttributeValues("fake", &cluster.CNI)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if got := vals["fake"].(types.Object).Attributes()["mtu"]; !got.Equal(types.Int64Value(1450)) {
		t.Errorf("fake.mtu = %v, want 1450", got)
	}
	if !vals["flannel"].IsNull() {
		t.Errorf("flannel's attribute is %v with cni = fake, want null", vals["flannel"])
	}

	// windows_golden_image: network_artifacts.fake.agent, unpacked and
	// installed where the join looks for it.
	at := networkArtifactsType()
	fakeType := at.AttrTypes["fake"].(types.ObjectType)
	dlType := fakeType.AttrTypes["agent"].(types.ObjectType)
	dl := types.ObjectValueMust(dlType.AttrTypes, map[string]attr.Value{
		"url": types.StringValue("https://example.com/fake-agent-v1.tgz"), "sha256": types.StringValue(strings.Repeat("a", 64))})
	modes := map[string]attr.Value{}
	for name, typ := range at.AttrTypes {
		modes[name] = types.ObjectNull(typ.(types.ObjectType).AttrTypes)
	}
	modes["fake"] = types.ObjectValueMust(fakeType.AttrTypes, map[string]attr.Value{"agent": dl})
	arts, diags := networkArtifacts(ctx, types.ObjectValueMust(at.AttrTypes, modes))
	if diags.HasError() {
		t.Fatal(diags)
	}
	if len(arts) != 1 || arts[0].InstallAs != fakeProgram || arts[0].Member != "bin/fake-agent.exe" || arts[0].ExtractTo != `C:\k` || arts[0].Name != "fake-agent" {
		t.Errorf("image downloads = %+v, want the fake agent unpacked into C:\\k", arts)
	}

	// The join: the mode's CNI configuration written, its program required.
	conf, err := fakeMode{}.CNIConfig(networking.Node{ClusterCIDR: "10.250.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := bootstrap.JoinSteps(bootstrap.JoinConfig{
		NodeName: "win-0", NodeIP: "10.0.0.21", APIServer: "https://10.0.0.10:6443",
		ClusterCA: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), BootstrapToken: "abcdef.0123456789abcdef",
		ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ClusterCIDR: "10.250.0.0/16", ServiceCIDR: "10.96.0.0/12",
		CNI: "fake", CNIConfList: conf, KubeletAdmit: []string{"10.0.0.10", "10.250.0.0/16"},
	})
	if err != nil {
		t.Fatal(err)
	}
	script := steps[0].Script
	if !strings.Contains(script, `10-fake.conflist`) || !strings.Contains(script, `fake-agent.exe`) {
		t.Errorf("the join's first step neither writes the fake CNI configuration nor requires its program:\n%s", script)
	}
}
