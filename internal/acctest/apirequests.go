package acctest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
)

// CountProviderRequests counts, on the API server itself, the requests the
// provider's ServiceAccount (examples/rbac) makes from now on: a FlowSchema of
// API Priority and Fairness that matches only that ServiceAccount (in the
// priority level "workload-low", where the suggested "service-accounts"
// FlowSchema puts it anyway), whose apiserver_flowcontrol_dispatched_requests_total
// the returned func reads from the server's /metrics. Server-side, as
// vcsim's call counts are: nothing in the provider is wrapped. The
// FlowSchema goes when the test ends.
func CountProviderRequests(t *testing.T) (count func() int) {
	t.Helper()
	k := Kube(t)
	ctx := context.Background()
	name := Name("acctest-count")
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
			MatchingPrecedence:         100, // before the suggested ones (service-accounts: 9000)
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: rbac.Namespace, Name: rbac.ServiceAccount}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					Namespaces: []string{"*"}, ClusterScope: true}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	if _, err := k.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the counting FlowSchema: %v", err)
	}
	t.Cleanup(func() { _ = k.FlowcontrolV1().FlowSchemas().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return func() int {
		body, err := k.Discovery().RESTClient().Get().AbsPath("/metrics").Do(context.Background()).Raw()
		if err != nil {
			t.Errorf("reading the API server's metrics: %v", err)
			return -1
		}
		n, err := dispatched(body, name)
		if err != nil {
			t.Error(err)
			return -1
		}
		return n
	}
}

// dispatched sums apiserver_flowcontrol_dispatched_requests_total of one
// FlowSchema in the Prometheus text format.
func dispatched(metrics []byte, flowSchema string) (int, error) {
	sum := 0
	sc := bufio.NewScanner(bytes.NewReader(metrics))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	label := fmt.Sprintf("flow_schema=%q", flowSchema)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{") || !strings.Contains(line, label) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("reading %q: %w", line, err)
		}
		sum += int(v)
	}
	return sum, sc.Err()
}
