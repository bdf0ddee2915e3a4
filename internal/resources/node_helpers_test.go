package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
	"github.com/wincluster/terraform-provider-windows/internal/kube"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// nodeFolder is where nodeConfig puts the VMs.
const nodeFolder = "/DC0/vm/windows"

// nodeName is a short unique node name (at most 15 characters).
func nodeName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, acctest.Seq()) }

// eventually polls cond until it holds or timeout passes. Tests may poll;
// the provider may not.
func eventually(timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%s: not within %s (last error: %v)", what, timeout, last)
	}
	return nil
}

// checkNodeReady checks that the Node exists, is Ready and schedulable.
func checkNodeReady(t *testing.T, name string) error {
	n, err := acctest.Kube(t).FindNode(context.Background(), name)
	if err != nil {
		return err
	}
	if !kube.NodeIsReady(n) {
		return fmt.Errorf("Node %s is not Ready: %v", name, n.Status.Conditions)
	}
	if n.Spec.Unschedulable {
		return fmt.Errorf("Node %s is still cordoned", name)
	}
	return nil
}

// vmAt returns the id of the VM at /DC0/vm/windows/<name>, or "".
func vmAt(t *testing.T, name string) (string, error) {
	ref, err := acctestVSphere(t).FindVMByPath(context.Background(), nodeFolder+"/"+name)
	if vsphere.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ref.Value, nil
}

// expectTracked is a pre-apply plan check after a failed create: state and
// vSphere agree. With tainted, the VM of node name exists, is the one in
// the prior state, which marks it tainted (so the plan replaces it); without,
// there is neither a VM nor a resource in the state.
type expectTracked struct {
	t       *testing.T
	addr    string
	name    string
	tainted bool
}

func (e expectTracked) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	vmID, err := vmAt(e.t, e.name)
	if err != nil {
		resp.Error = err
		return
	}
	var stateID string
	var tainted bool
	if ps := req.Plan.PriorState; ps != nil && ps.Values != nil && ps.Values.RootModule != nil {
		for _, r := range ps.Values.RootModule.Resources {
			if r.Address == e.addr {
				stateID, _ = r.AttributeValues["id"].(string)
				tainted = r.Tainted
			}
		}
	}
	switch {
	case !e.tainted && (vmID != "" || stateID != ""):
		resp.Error = fmt.Errorf("after the failure: VM %q in vSphere, %q in the state; want neither", vmID, stateID)
	case e.tainted && (vmID == "" || vmID != stateID):
		resp.Error = fmt.Errorf("after the failure: VM %q in vSphere but %q in the state; want the same VM in both", vmID, stateID)
	case e.tainted && !tainted:
		resp.Error = fmt.Errorf("%s (VM %s) is in the state but not tainted", e.addr, stateID)
	}
}

// wrapped compiles a pattern in which every space also matches the line
// breaks Terraform inserts when it wraps a diagnostic.
func wrapped(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}
