package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
)

// benchUser is the provider's Kubernetes user in the benchmarks: bound to
// the provider's documented roles like the sandbox's ServiceAccount, but a
// user of its own, so FlowSchemas can single out its requests.
const benchUser = "bench:terraform-provider-windows"

// flows are the FlowSchemas that classify the provider's requests, by what
// they are for: a GET of a Node (what a refresh should make, one per node),
// the other Node verbs, the resources a create reads or writes, and a
// catch-all (other resources, discovery and other non-resource URLs). They
// match in this order.
var flows = []struct {
	name      string
	verbs     []string
	group     string
	resources []string
}{
	{"bench-provider-get-nodes", []string{"get"}, "", []string{"nodes"}},
	{"bench-provider-watch-nodes", []string{"list", "watch"}, "", []string{"nodes"}},
	{"bench-provider-write-nodes", []string{"create", "update", "patch", "delete"}, "", []string{"nodes"}},
	{"bench-provider-configmaps", []string{"*"}, "", []string{"configmaps"}},
	{"bench-provider-pods", []string{"*"}, "", []string{"pods", "pods/eviction"}},
	{"bench-provider-secrets", []string{"*"}, "", []string{"secrets"}},
	{"bench-provider-services", []string{"*"}, "", []string{"services"}},
	{"bench-provider-daemonsets", []string{"*"}, "apps", []string{"daemonsets"}},
	{"bench-provider-servicecidrs", []string{"*"}, "networking.k8s.io", []string{"servicecidrs"}},
	{"bench-provider-other", nil, "", nil}, // everything else
}

const flowGetNodes = "bench-provider-get-nodes"

// Metric names read from the API server.
const (
	metricDispatched = "apiserver_flowcontrol_dispatched_requests_total"
	metricExecSum    = "apiserver_flowcontrol_request_execution_seconds_sum"
	metricRequests   = "apiserver_request_total"
)

// kubeCounter counts the provider's Kubernetes requests at the API server.
type kubeCounter struct {
	admin      kubernetes.Interface
	kubeconfig string // the provider's
}

// kubeCount is a reading of the API server's counters.
type kubeCount struct {
	// Provider is the provider's requests by FlowSchema.
	Provider map[string]float64
	// ProviderExec is the API server's execution time of them, in seconds
	// (their handling, without any time spent in the client).
	ProviderExec float64
	// All is apiserver_request_total of every client by "VERB resource[/subresource]".
	All map[string]float64
}

func (c kubeCount) providerTotal() float64 {
	var n float64
	for _, v := range c.Provider {
		n += v
	}
	return n
}

// providerByFlow formats Provider without the common name prefix.
func (c kubeCount) providerByFlow() string {
	m := map[string]float64{}
	for k, v := range c.Provider {
		m[strings.TrimPrefix(k, "bench-provider-")] = v
	}
	return topKeys(m, len(m))
}

// sub returns c - before.
func (c kubeCount) sub(before kubeCount) kubeCount {
	d := kubeCount{Provider: map[string]float64{}, All: map[string]float64{}, ProviderExec: c.ProviderExec - before.ProviderExec}
	for k, v := range c.Provider {
		if x := v - before.Provider[k]; x != 0 {
			d.Provider[k] = x
		}
	}
	for k, v := range c.All {
		if x := v - before.All[k]; x != 0 {
			d.All[k] = x
		}
	}
	return d
}

func newKubeCounter(ctx context.Context, sb *sandbox.Sandbox, dir string) (*kubeCounter, error) {
	k := &kubeCounter{admin: sb.ControlPlane.Client, kubeconfig: filepath.Join(dir, "provider.kubeconfig")}
	// The provider's documented roles (examples/rbac), as in every
	// acceptance test: measured with the permissions users give it.
	certPEM, keyPEM, err := sb.IssueProviderCertificate(ctx, benchUser)
	if err != nil {
		return nil, fmt.Errorf("provider client certificate: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["sandbox"] = &clientcmdapi.Cluster{Server: sb.ControlPlane.Server, CertificateAuthority: sb.CAFile}
	kc.AuthInfos["provider"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	kc.Contexts["sandbox"] = &clientcmdapi.Context{Cluster: "sandbox", AuthInfo: "provider"}
	kc.CurrentContext = "sandbox"
	if err := clientcmd.WriteToFile(*kc, k.kubeconfig); err != nil {
		return nil, err
	}
	subjects := []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: benchUser}}}
	for i, f := range flows {
		rule := flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects}
		if f.resources != nil {
			rule.ResourceRules = []flowcontrolv1.ResourcePolicyRule{{
				Verbs: f.verbs, APIGroups: []string{f.group}, Resources: f.resources, ClusterScope: true, Namespaces: []string{"*"},
			}}
		} else {
			rule.ResourceRules = []flowcontrolv1.ResourcePolicyRule{{
				Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"},
			}}
			rule.NonResourceRules = []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
		}
		fs := &flowcontrolv1.FlowSchema{
			ObjectMeta: metav1.ObjectMeta{Name: f.name},
			Spec: flowcontrolv1.FlowSchemaSpec{
				// Exempt: counted, never queued, so counting changes nothing.
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: flowcontrolv1.PriorityLevelConfigurationNameExempt},
				MatchingPrecedence:         int32(50 + i),
				Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rule},
			},
		}
		if _, err := k.admin.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("FlowSchema %s: %w", fs.Name, err)
		}
	}
	return k, k.waitForFlowSchemas(ctx)
}

// waitForFlowSchemas returns once the API server classifies the provider's
// requests by the new FlowSchemas (its configuration controller picks them
// up asynchronously).
func (k *kubeCounter) waitForFlowSchemas(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", k.kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			return fmt.Errorf("the provider's identity cannot reach the API server: %w", err)
		}
		c, err := k.count(ctx)
		if err != nil {
			return err
		}
		if c.Provider[flows[len(flows)-1].name] > 0 { // GET /version
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server never classified %s's requests by the bench FlowSchemas", benchUser)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// count reads the API server's request counters (with the admin identity,
// which the bench FlowSchemas do not match).
func (k *kubeCounter) count(ctx context.Context) (kubeCount, error) {
	raw, err := k.admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return kubeCount{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return tally(parseMetrics(raw, metricDispatched, metricExecSum, metricRequests)), nil
}

// tally adds up the samples count reads: the provider's requests by bench
// FlowSchema and their execution time, every client's by verb and resource.
func tally(samples []sample) kubeCount {
	c := kubeCount{Provider: map[string]float64{}, All: map[string]float64{}}
	for _, s := range samples {
		fs := s.Labels["flow_schema"]
		switch {
		case s.Name == metricDispatched && strings.HasPrefix(fs, "bench-provider-"):
			c.Provider[fs] += s.Value
		case s.Name == metricExecSum && strings.HasPrefix(fs, "bench-provider-"):
			c.ProviderExec += s.Value
		case s.Name == metricRequests:
			c.All[requestKey(s.Labels)] += s.Value
		}
	}
	return c
}

// requestKey is "VERB resource[/subresource]" of apiserver_request_total's
// labels, or "VERB (non-resource)".
func requestKey(labels map[string]string) string {
	if labels["resource"] == "" {
		return labels["verb"] + " (non-resource)"
	}
	key := labels["verb"] + " " + labels["resource"]
	if sub := labels["subresource"]; sub != "" {
		key += "/" + sub
	}
	return key
}

// sample is one series of a Prometheus text exposition.
type sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parseMetrics reads the samples of the named metrics from a Prometheus text
// exposition (format 0.0.4).
func parseMetrics(data []byte, names ...string) []sample {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []sample
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if !want[name] {
			continue
		}
		s := sample{Name: name, Labels: map[string]string{}}
		if strings.HasPrefix(rest, "{") {
			var ok bool
			if rest, ok = parseLabels(rest[1:], s.Labels); !ok {
				continue
			}
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		s.Value = v
		out = append(out, s)
	}
	return out
}

// parseLabels reads `k="v",...}` into labels and returns what follows.
func parseLabels(s string, labels map[string]string) (string, bool) {
	for {
		s = strings.TrimLeft(s, ", ")
		if strings.HasPrefix(s, "}") {
			return s[1:], true
		}
		eq := strings.Index(s, `="`)
		if eq < 0 {
			return "", false
		}
		key := s[:eq]
		s = s[eq+2:]
		var v strings.Builder
		i := 0
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					v.WriteByte('\n')
				default:
					v.WriteByte(s[i])
				}
				continue
			}
			v.WriteByte(s[i])
		}
		if i == len(s) {
			return "", false
		}
		labels[key] = v.String()
		s = s[i+1:]
	}
}

// topKeys formats the largest entries of m, for logs.
func topKeys(m map[string]float64, n int) string {
	type kv struct {
		k string
		v float64
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	if len(all) > n {
		all = all[:n]
	}
	parts := make([]string, len(all))
	for i, e := range all {
		parts[i] = fmt.Sprintf("%s=%g", e.k, e.v)
	}
	return strings.Join(parts, ", ")
}
