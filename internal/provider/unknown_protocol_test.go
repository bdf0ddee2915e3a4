package provider_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// decoy is a TCP endpoint that counts the connections it is offered: the
// cluster the environment points at, which a plan with unknown provider
// settings must not contact.
type decoy struct {
	URL   string
	conns atomic.Int64
}

// newDecoy starts a decoy and points KUBECONFIG, KUBE_HOST and
// VSPHERE_SERVER at it.
func newDecoy(t *testing.T) *decoy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() }) // the accept loop ends on it
	d := &decoy{URL: "https://" + l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			d.conns.Add(1)
			_ = c.Close() // the decoy only counts connections
		}
	}()
	kubeconfig := filepath.Join(t.TempDir(), "decoy-kubeconfig")
	err = os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: decoy, cluster: {server: %q}}]
users: [{name: decoy, user: {}}]
contexts: [{name: decoy, context: {cluster: decoy, user: decoy}}]
current-context: decoy
`, d.URL)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv("KUBE_HOST", d.URL)
	t.Setenv("VSPHERE_SERVER", d.URL)
	return d
}

func (d *decoy) untouched(t *testing.T) {
	t.Helper()
	if n := d.conns.Load(); n != 0 {
		t.Errorf("the provider connected %d times to the environment's cluster %s", n, d.URL)
	}
}

// protocolServer is the provider as the CLI sees it, with the value types of
// its schemas.
type protocolServer struct {
	tfprotov6.ProviderServer
	schema *tfprotov6.GetProviderSchemaResponse
}

func newProtocolServer(t *testing.T) *protocolServer {
	t.Helper()
	s, err := providerserver.NewProtocol6WithError(provider.New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasError(schema.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %v", err, schema.Diagnostics)
	}
	return &protocolServer{ProviderServer: s, schema: schema}
}

// value is an object of the given schema with the given attributes, the
// others null (what Terraform sends for attributes not written).
func value(t *testing.T, schema *tfprotov6.Schema, attrs map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	typ := schema.ValueType().(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range attrs {
		if _, ok := typ.AttributeTypes[name]; !ok {
			t.Fatalf("no attribute %q", name)
		}
		vals[name] = v
	}
	return tftypes.NewValue(typ, vals)
}

func dynamic(t *testing.T, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(v.Type(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// configure sends a provider configuration with the given attributes of each
// block (the others null), as Terraform does at plan.
func (s *protocolServer) configure(t *testing.T, deferralAllowed bool, blocks map[string]map[string]tftypes.Value) {
	t.Helper()
	providerType := s.schema.Provider.ValueType().(tftypes.Object)
	config := map[string]tftypes.Value{}
	for name, attrs := range blocks {
		blockType := providerType.AttributeTypes[name].(tftypes.Object)
		block := map[string]tftypes.Value{}
		for an, at := range blockType.AttributeTypes {
			block[an] = tftypes.NewValue(at, nil)
		}
		for an, v := range attrs {
			block[an] = v
		}
		config[name] = tftypes.NewValue(blockType, block)
	}
	resp, err := s.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{
		TerraformVersion:   "1.11.4",
		Config:             dynamic(t, value(t, s.schema.Provider, config)),
		ClientCapabilities: &tfprotov6.ConfigureProviderClientCapabilities{DeferralAllowed: deferralAllowed},
	})
	if err != nil || hasError(resp.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %s", err, diagText(resp.Diagnostics))
	}
}

var unknownString = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)

func knownString(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

// configureUnknownHost: kubernetes.host unknown, the token known, as when the
// host comes from a resource of the same run.
func (s *protocolServer) configureUnknownHost(t *testing.T, deferralAllowed bool) {
	t.Helper()
	s.configure(t, deferralAllowed, map[string]map[string]tftypes.Value{
		"kubernetes": {"host": unknownString, "token": knownString("known-token")},
	})
}

// planNew plans the creation of a resource with the given attributes.
func (s *protocolServer) planNew(t *testing.T, typeName string, attrs map[string]tftypes.Value, deferralAllowed bool) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	schema := s.schema.ResourceSchemas[typeName]
	config := value(t, schema, attrs)
	resp, err := s.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName:           typeName,
		PriorState:         dynamic(t, tftypes.NewValue(schema.ValueType(), nil)),
		ProposedNewState:   dynamic(t, config),
		Config:             dynamic(t, config),
		ClientCapabilities: &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: deferralAllowed},
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (s *protocolServer) readCluster(t *testing.T, deferralAllowed bool) *tfprotov6.ReadDataSourceResponse {
	t.Helper()
	resp, err := s.ReadDataSource(context.Background(), &tfprotov6.ReadDataSourceRequest{
		TypeName:           "windows_cluster",
		Config:             dynamic(t, value(t, s.schema.DataSourceSchemas["windows_cluster"], nil)),
		ClientCapabilities: &tfprotov6.ReadDataSourceClientCapabilities{DeferralAllowed: deferralAllowed},
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// gmsaCredentialSpecAttrs is New-CredentialSpec's document for the gMSA
// WebApp01 of contoso.com.
func gmsaCredentialSpecAttrs() map[string]tftypes.Value {
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	dj := map[string]tftypes.Type{"sid": tftypes.String, "machine_account_name": tftypes.String, "guid": tftypes.String,
		"dns_tree_name": tftypes.String, "dns_name": tftypes.String, "netbios_name": tftypes.String}
	scope := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String, "scope": tftypes.String}}
	return map[string]tftypes.Value{
		"name": knownString("webapp01"),
		"domain_join_config": tftypes.NewValue(tftypes.Object{AttributeTypes: dj}, map[string]tftypes.Value{
			"sid": str("S-1-5-21-702590844-1001920913-2680819671"), "machine_account_name": str("WebApp01"),
			"guid": str("56d9b66c-d746-4f87-bd26-26760cfdca2e"), "dns_tree_name": str("contoso.com"),
			"dns_name": str("contoso.com"), "netbios_name": str("CONTOSO"),
		}),
		"group_managed_service_accounts": tftypes.NewValue(tftypes.List{ElementType: scope}, []tftypes.Value{
			tftypes.NewValue(scope, map[string]tftypes.Value{"name": str("WebApp01"), "scope": str("contoso.com")}),
		}),
	}
}

var runtimeClassAttrs = map[string]tftypes.Value{"name": knownString("windows-2022"), "windows_version": knownString("2022")}

// readRuntimeClass refreshes an existing windows_runtime_class.
func (s *protocolServer) readRuntimeClass(t *testing.T, deferralAllowed bool) *tfprotov6.ReadResourceResponse {
	t.Helper()
	schema := s.schema.ResourceSchemas["windows_runtime_class"]
	state := value(t, schema, map[string]tftypes.Value{
		"id": tftypes.NewValue(tftypes.String, "windows-2022"), "name": tftypes.NewValue(tftypes.String, "windows-2022"),
		"windows_version": tftypes.NewValue(tftypes.String, "2022"),
	})
	resp, err := s.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
		TypeName:           "windows_runtime_class",
		CurrentState:       dynamic(t, state),
		ClientCapabilities: &tfprotov6.ReadResourceClientCapabilities{DeferralAllowed: deferralAllowed},
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// With a CLI that allows deferral, unknown provider settings defer every
// plan and read of the provider, and nothing is contacted.
func TestProtocol_unknownProviderConfigDefers(t *testing.T) {
	d := newDecoy(t)
	s := newProtocolServer(t)
	s.configureUnknownHost(t, true)

	want := tfprotov6.DeferredReasonProviderConfigUnknown
	if r := s.readCluster(t, true); r.Deferred == nil || r.Deferred.Reason != want || hasError(r.Diagnostics) {
		t.Errorf("ReadDataSource windows_cluster: deferred %v, diagnostics %s; want deferred (%s)", r.Deferred, diagText(r.Diagnostics), want)
	}
	if r := s.planNew(t, "windows_runtime_class", runtimeClassAttrs, true); r.Deferred == nil || r.Deferred.Reason != want || hasError(r.Diagnostics) {
		t.Errorf("PlanResourceChange windows_runtime_class: deferred %v, diagnostics %s; want deferred (%s)", r.Deferred, diagText(r.Diagnostics), want)
	}
	if r := s.readRuntimeClass(t, true); r.Deferred == nil || r.Deferred.Reason != want || hasError(r.Diagnostics) {
		t.Errorf("ReadResource windows_runtime_class: deferred %v, diagnostics %s; want deferred (%s)", r.Deferred, diagText(r.Diagnostics), want)
	}
	d.untouched(t)
}

// Without deferral (Terraform 1.11, OpenTofu 1.12), a new resource still
// plans, and a read (data source, refresh) fails naming the unknown setting,
// instead of reading the cluster the environment points at.
func TestProtocol_unknownProviderConfigWithoutDeferral(t *testing.T) {
	d := newDecoy(t)
	s := newProtocolServer(t)
	s.configureUnknownHost(t, false)

	if r := s.planNew(t, "windows_runtime_class", runtimeClassAttrs, false); r.Deferred != nil || hasError(r.Diagnostics) {
		t.Errorf("PlanResourceChange windows_runtime_class: deferred %v, diagnostics %s; want a plan", r.Deferred, diagText(r.Diagnostics))
	}
	// A resource that reads the cluster at plan leaves its discovered
	// values unknown and says why.
	r := s.planNew(t, "windows_node_networking", map[string]tftypes.Value{"cni": knownString("flannel")}, false)
	if hasError(r.Diagnostics) || !strings.Contains(diagText(r.Diagnostics), "[WARNING] Cluster not read during this plan: The provider's kubernetes.host is unknown") {
		t.Errorf("PlanResourceChange windows_node_networking: diagnostics %s; want a plan and a warning naming kubernetes.host", diagText(r.Diagnostics))
	} else if planned, err := r.PlannedState.Unmarshal(s.schema.ResourceSchemas["windows_node_networking"].ValueType()); err != nil {
		t.Error(err)
	} else {
		var attrs map[string]tftypes.Value
		_ = planned.As(&attrs)
		if attrs["api_server"].IsKnown() {
			t.Errorf("api_server planned as %v: want it unknown, discovered at apply", attrs["api_server"])
		}
	}
	for what, diags := range map[string][]*tfprotov6.Diagnostic{
		"ReadDataSource windows_cluster":     s.readCluster(t, false).Diagnostics,
		"ReadResource windows_runtime_class": s.readRuntimeClass(t, false).Diagnostics,
	} {
		text := diagText(diags)
		if !hasError(diags) || !strings.Contains(text, "kubernetes.host is unknown until apply") || !strings.Contains(text, "-target") {
			t.Errorf("%s: diagnostics %s; want an error naming kubernetes.host and the fix", what, text)
		}
	}
	d.untouched(t)
}

// Every resource still plans its creation when both blocks hold an unknown
// setting: what the plan would read from the cluster or vCenter is left for
// apply, and no error stops the plan.
func TestProtocol_unknownProviderConfigEveryResourcePlans(t *testing.T) {
	d := newDecoy(t)
	s := newProtocolServer(t)
	s.configure(t, false, map[string]map[string]tftypes.Value{
		"kubernetes": {"host": unknownString},
		"vsphere":    {"server": unknownString, "user": knownString("administrator@vsphere.local")},
	})
	sha := knownString(strings.Repeat("ab", 32))
	resources := map[string]map[string]tftypes.Value{
		"windows_runtime_class":         runtimeClassAttrs,
		"windows_gmsa_credential_spec":  gmsaCredentialSpecAttrs(),
		"windows_node_networking":       {"cni": knownString("flannel")},
		"windows_linux_daemonset_guard": {"namespace": knownString("kube-system")},
		"windows_golden_image": {
			"name": knownString("win2022-k8s"), "folder": knownString("/DC0/vm/templates"), "source_template": knownString("/DC0/vm/templates/win2022-base"),
			"resource_pool_id": knownString("resgroup-1"), "kubernetes_version": knownString("v1.36.3"),
			"kubelet_sha256": sha, "kube_proxy_sha256": sha, "containerd_sha256": sha, "cni_plugins_sha256": sha,
			"containerd_url":  knownString("https://github.com/containerd/containerd/releases/download/v2.2.7/containerd-2.2.7-windows-amd64.tar.gz"),
			"cni_plugins_url": knownString("https://github.com/containernetworking/plugins/releases/download/v1.7.1/cni-plugins-windows-amd64-v1.7.1.tgz"),
		},
		"windows_node": {
			"name": knownString("win-1"), "template": knownString("/DC0/vm/templates/win2022-k8s"), "folder": knownString("/DC0/vm"),
			"resource_pool_id": knownString("resgroup-1"),
		},
		"windows_node_pool": {
			"name_prefix": knownString("win"), "replicas": tftypes.NewValue(tftypes.Number, 3),
			"template": knownString("/DC0/vm/templates/win2022-k8s"), "folder": knownString("/DC0/vm"),
			"resource_pool_id": knownString("resgroup-1"),
		},
	}
	for name := range s.schema.ResourceSchemas {
		if _, ok := resources[name]; !ok {
			t.Errorf("%s is not planned here: add it", name)
		}
	}
	for name, attrs := range resources {
		if _, ok := s.schema.ResourceSchemas[name]; !ok {
			t.Fatalf("no resource %s", name)
		}
		r := s.planNew(t, name, attrs, false)
		if hasError(r.Diagnostics) || r.PlannedState == nil {
			t.Errorf("PlanResourceChange %s: diagnostics %s; want a plan", name, diagText(r.Diagnostics))
		}
		// What the plan would ask vCenter is postponed, and says so.
		if text := diagText(r.Diagnostics); strings.Contains(name, "golden_image") || strings.Contains(name, "windows_node") && name != "windows_node_networking" {
			if !strings.Contains(text, "[WARNING] vSphere checks of") || !strings.Contains(text, "postponed to apply") || !strings.Contains(text, "vsphere.server") {
				t.Errorf("PlanResourceChange %s: diagnostics %s; want a warning that the vSphere checks wait for apply, naming vsphere.server", name, text)
			}
		}
	}
	d.untouched(t)
}

func hasError(diags []*tfprotov6.Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

func diagText(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "[%s] %s: %s\n", d.Severity, d.Summary, d.Detail)
	}
	return b.String()
}
