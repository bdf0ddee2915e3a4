package bench

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The parsers the benchmarks read their numbers with, on lines in the
// formats the API server, Terraform and the provider write.

func TestParseMetrics(t *testing.T) {
	exposition := `# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem
# TYPE apiserver_flowcontrol_dispatched_requests_total counter
apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-provider-get-nodes",priority_level="exempt"} 100
apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"} 2.5e+03
apiserver_flowcontrol_request_execution_seconds_sum{flow_schema="bench-provider-other",priority_level="exempt",type="regular"} 0.125
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="nodes",scope="resource",subresource="status",verb="PUT",version="v1"} 37
apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/version",verb="GET",version=""} 4
apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="nodes",scope="resource",subresource="",verb="GET",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="nodes",scope="resource",subresource="",verb="GET",version="v1"} 7
apiserver_other_total{a="b"} 9
weird_escape{path="a\"b\\c"} 1
`
	got := parseMetrics([]byte(exposition), metricDispatched, metricExecSum, metricRequests, "weird_escape")
	if len(got) != 8 {
		t.Fatalf("%d samples, want 8: %+v", len(got), got)
	}
	if got[1].Value != 2500 || got[1].Labels["flow_schema"] != "exempt" {
		t.Errorf("sample 1 = %+v", got[1])
	}
	if got[7].Labels["path"] != `a"b\c` {
		t.Errorf("escaped label = %q", got[7].Labels["path"])
	}

	// What count makes of them: the provider's flows, all clients' requests
	// by verb and resource (codes summed).
	c := tally(got)
	if c.providerTotal() != 100 || c.ProviderExec != 0.125 || c.All["GET nodes"] != 10 || c.All["PUT nodes/status"] != 37 || c.All["GET (non-resource)"] != 4 {
		t.Errorf("count = %+v", c)
	}
	d := c.sub(kubeCount{Provider: map[string]float64{flowGetNodes: 40}, All: map[string]float64{"GET nodes": 10}})
	if d.Provider[flowGetNodes] != 60 || len(d.All) != 2 {
		t.Errorf("difference = %+v", d)
	}
}

func TestParseProviderLog(t *testing.T) {
	lines := `2026-11-22T12:33:35.700Z [INFO]  Terraform version: 1.11.4
2026-11-22T12:33:35.843Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: clone: @caller=github.com/wincluster/terraform-provider-windows/internal/resources/node.go:65 template=/DC0/vm/golden/bench-apply-0 tf_provider_addr=registry.terraform.io/wincluster/windows tf_rpc=ApplyResourceChange @module=windows tf_req_id=r1 tf_resource_type=windows_node timestamp=2026-11-22T12:33:35.843Z
2026-11-22T12:33:35.891Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: power on: @module=windows tf_req_id=r1 tf_resource_type=windows_node tf_rpc=ApplyResourceChange vm=vm-82 timestamp=2026-11-22T12:33:35.890Z
2026-11-22T12:33:35.900Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: clone: tf_req_id=r2 tf_resource_type=windows_node tf_rpc=ApplyResourceChange timestamp=2026-11-22T12:33:35.900Z
2026-11-22T12:33:36.200Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: step join-files: tf_req_id=r1 tf_resource_type=windows_node tf_rpc=ApplyResourceChange timestamp=2026-11-22T12:33:36.190Z
2026-11-22T12:33:36.500Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: node settings: node=ap0-10 provider_id=vsphere://31faf927 tf_req_id=r1 tf_resource_type=windows_node tf_rpc=ApplyResourceChange timestamp=2026-11-22T12:33:36.490Z
2026-11-22T12:33:36.800Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node joined: @module=windows node=ap0-10 ready_to_done=394.400539ms tf_rpc=ApplyResourceChange tf_req_id=r1 tf_resource_type=windows_node timestamp=2026-11-22T12:33:36.790Z
2026-11-22T12:33:37.000Z [INFO]  provider.terraform-provider-windows_v0.1.0: golden image: build: tf_req_id=r3 tf_resource_type=windows_golden_image tf_rpc=ApplyResourceChange timestamp=2026-11-22T12:33:37.000Z
`
	path := filepath.Join(t.TempDir(), "apply.log")
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := parseProviderLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 7 {
		t.Fatalf("%d entries, want 7: %+v", len(entries), entries)
	}
	if e := entries[0]; e.Message != "windows node: clone" || e.Fields["template"] != "/DC0/vm/golden/bench-apply-0" || e.Fields["tf_req_id"] != "r1" {
		t.Errorf("entry 0 = %+v", e)
	}
	if want := time.Date(2026, 11, 22, 12, 33, 35, 890e6, time.UTC); !entries[1].Time.Equal(want) {
		t.Errorf("entry 1 at %s, want the provider's timestamp %s", entries[1].Time, want)
	}

	creates := nodeCreates(entries)
	if len(creates) != 1 {
		t.Fatalf("%d finished creates, want 1 (r2 never joined): %+v", len(creates), creates)
	}
	c := creates[0]
	if c.Node != "ap0-10" || c.ReadyToDone != 394400539*time.Nanosecond || len(c.Stages) != 4 {
		t.Errorf("create = %+v", c)
	}
	table := stageTable(creates)
	for _, want := range []string{"clone", "47.0ms", "step join-files", "300.0ms", "node settings"} {
		if !strings.Contains(table, want) {
			t.Errorf("stage table lacks %q:\n%s", want, table)
		}
	}
}

func TestApplySpans(t *testing.T) {
	out := `{"@level":"info","@message":"Terraform 1.11.4","@module":"terraform.ui","@timestamp":"2026-11-22T12:40:37.767852Z","terraform":"1.11.4","type":"version","ui":"1.2"}
{"@level":"info","@message":"windows_node.n[3]: Creating...","@module":"terraform.ui","@timestamp":"2026-11-22T12:40:38.000000Z","hook":{"resource":{"addr":"windows_node.n[3]","module":"","resource":"windows_node.n[3]","implied_provider":"windows","resource_type":"windows_node","resource_name":"n","resource_key":3},"action":"create"},"type":"apply_start"}
{"@level":"info","@message":"windows_node.n[3]: Creation complete after 2s [id=vm-82]","@module":"terraform.ui","@timestamp":"2026-11-22T12:40:40.512500Z","hook":{"resource":{"addr":"windows_node.n[3]","module":"","resource":"windows_node.n[3]","implied_provider":"windows","resource_type":"windows_node","resource_name":"n","resource_key":3},"action":"create","id_key":"id","id_value":"vm-82","elapsed_seconds":2},"type":"apply_complete"}
{"@level":"error","@message":"Error: Cluster not ready","@module":"terraform.ui","@timestamp":"2026-11-22T12:40:41.000000Z","diagnostic":{"severity":"error","summary":"Cluster not ready","detail":"node-cidr-allocation failed"},"type":"diagnostic"}
not json
`
	spans := applySpans([]byte(out))
	s := spans["windows_node.n[3]"]
	if len(spans) != 1 || s == nil || s.Type != "windows_node" || s.Duration() != 2512500*time.Microsecond {
		t.Fatalf("spans = %+v", spans)
	}
	if d := diagnostics([]byte(out)); !strings.Contains(d, "Error: Cluster not ready\nnode-cidr-allocation failed") {
		t.Errorf("diagnostics = %q", d)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 20; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{0: 1 * time.Millisecond, 50: 10 * time.Millisecond, 90: 18 * time.Millisecond, 100: 20 * time.Millisecond} {
		if got := percentile(ds, p); got != want {
			t.Errorf("p%g = %s, want %s", p, got, want)
		}
	}
	if ds[0] != 20*time.Millisecond {
		t.Error("percentile sorted its argument")
	}
	if percentile(nil, 50) != 0 || mean(nil) != 0 {
		t.Error("empty input")
	}
}

func TestPlanEvents(t *testing.T) {
	out := `{"@level":"info","@message":"windows_node.n[77]: Refresh complete [id=vm-641]","@module":"terraform.ui","@timestamp":"2026-11-22T12:47:30.088199Z","hook":{"resource":{"addr":"windows_node.n[77]","resource_type":"windows_node"},"id_key":"id","id_value":"vm-641"},"type":"refresh_complete"}
{"@level":"info","@message":"windows_node.n[77]: Drift detected (update)","@module":"terraform.ui","@timestamp":"2026-11-22T12:47:31.048395Z","change":{"resource":{"addr":"windows_node.n[77]","resource_type":"windows_node"},"action":"update"},"type":"resource_drift"}
{"@level":"info","@message":"windows_node.n[3]: Plan to update","@module":"terraform.ui","@timestamp":"2026-11-22T12:47:31.048395Z","change":{"resource":{"addr":"windows_node.n[3]","resource_type":"windows_node"},"action":"update"},"type":"planned_change"}
{"@level":"info","@message":"Plan: 0 to add, 1 to change, 0 to destroy.","@module":"terraform.ui","@timestamp":"2026-11-22T12:40:40.239959Z","changes":{"add":0,"change":1,"import":0,"remove":0,"operation":"plan"},"type":"change_summary"}
`
	drift, changes := planEvents([]byte(out))
	if len(drift) != 1 || drift[0] != "windows_node.n[77]" || len(changes) != 1 || changes[0] != "windows_node.n[3]: Plan to update" {
		t.Errorf("drift %q, changes %q", drift, changes)
	}
}

func TestPoolLog(t *testing.T) {
	line := func(at, msg, fields string) string {
		return "2026-11-22T12:33:35.000Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node pool: " + msg + ": " + fields +
			" tf_rpc=ApplyResourceChange tf_req_id=r1 tf_resource_type=windows_node_pool timestamp=2026-11-22T12:33:" + at + "Z"
	}
	lines := strings.Join([]string{
		line("30.000", "create member", "member=p-aaaaa"),
		line("30.100", "create member", "member=p-bbbbb"),
		"2026-11-22T12:33:31.000Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: clone: template=/DC0/vm/golden/x tf_req_id=r1 timestamp=2026-11-22T12:33:31.000Z",
		line("35.000", "member ready", "member=p-aaaaa ready_to_done=250ms"),
		line("35.500", "remove member", "member=p-old01 reason=outdated"),
		"2026-11-22T12:33:35.000Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: wait for node agents: namespace=kube-system node=p-bbbbb tf_req_id=r1 timestamp=2026-11-22T12:33:35.250Z",
		line("36.000", "member ready", "member=p-bbbbb ready_to_done=1.5s"),
		line("37.500", "member removed", "member=p-old01"),
		line("38.000", "create member", "member=p-ccccc"),
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "apply.log")
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := parseProviderLog(path)
	if err != nil {
		t.Fatal(err)
	}
	r := poolLog(entries, 1)
	members := r.Members
	// 1 before, +2 creates = 3, -1 removed = 2, +1 create = 3; creating
	// 1, 2, then 0 and 1.
	if len(members) != 4 || r.MaxMembers != 3 || r.MaxCreating != 2 {
		t.Fatalf("%d members, at most %d at once, %d creating; want 4, 3 and 2: %+v", len(members), r.MaxMembers, r.MaxCreating, members)
	}
	if m := members["p-old01"]; m.RemovedEnd.Sub(m.RemoveStart) != 2*time.Second {
		t.Errorf("removal of p-old01: %+v", m)
	}
	creates, readyToDone := memberCreates(members)
	if percentile(creates, 0) != 5*time.Second || percentile(creates, 100) != 5900*time.Millisecond || len(creates) != 2 {
		t.Errorf("creates = %v (p-ccccc never got Ready)", creates)
	}
	if percentile(readyToDone, 100) != 1500*time.Millisecond {
		t.Errorf("ready to done = %v", readyToDone)
	}
	if w := agentWaits(members); len(w) != 1 || w[0] != 750*time.Millisecond {
		t.Errorf("agent waits = %v, want [750ms] (p-bbbbb's)", w)
	}
}

func TestStatusField(t *testing.T) {
	status := []byte("Name:\tterraform-provi\nVmPeak:\t 1302880 kB\nVmHWM:\t   61244 kB\nVmRSS:\t   60000 kB\n")
	if v, ok := statusField(status, "VmHWM:"); !ok || v != 61244 {
		t.Errorf("VmHWM = %d, %v", v, ok)
	}
	if _, ok := statusField(status, "VmSwap:"); ok {
		t.Error("a missing field was found")
	}
}

func TestBenchtimeDefault(t *testing.T) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.benchtime" && f.Value.String() != "1x" })
	if got := flag.Lookup("test.benchtime").Value.String(); !explicit && got != "1x" {
		t.Errorf("-benchtime is %q without an explicit one, want 1x: every benchmark here runs its op once", got)
	}
}
