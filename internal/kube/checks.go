package kube

import (
	"context"
	"fmt"
	"strings"
)

// Check statuses. Only a failed check makes a cluster not ready: a warning
// is something the user should know but may have handled another way.
const (
	StatusPass = "pass"
	StatusWarn = "warn"
	StatusFail = "fail"
)

// Check IDs. They are stable: users skip checks by them. A check about one
// object appends ":<object>" to its family's ID, for example
// "linux-daemonset:kube-system/kube-proxy"; skipping the family ID skips
// every check of the family.
const (
	CheckNodeCIDRAllocation = "node-cidr-allocation"
	CheckCNI                = "cni"
	CheckLinuxDaemonSet     = "linux-daemonset"
	CheckLinuxHeadroom      = "linux-headroom"
	CheckVersionSkew        = "version-skew"
	CheckWindowsBuild       = "windows-build"
	// CheckWindowsSupport is no readiness check of the cluster: listing it
	// acknowledges the plan's warning that a node's Windows Server release
	// is outside Kubernetes' supported releases for the cluster's version or
	// past Microsoft's support (winversion.SupportWarnings), and silences it.
	CheckWindowsSupport = "windows-support"
)

// CheckFamilies lists every check family ID, for validating skip lists.
var CheckFamilies = []string{
	CheckNodeCIDRAllocation, CheckCNI, CheckLinuxDaemonSet, CheckLinuxHeadroom, CheckVersionSkew, CheckWindowsBuild,
	CheckNetworkProbe, CheckWindowsSupport,
}

// Check is the outcome of one readiness check. Message says what was found;
// Remedy says exactly what to change (flag, ConfigMap key, command), and is
// empty when there is nothing to do.
type Check struct {
	ID      string
	Status  string
	Message string
	Remedy  string
}

// CheckOptions tune RunChecks.
type CheckOptions struct {
	// KubernetesVersion is the kubelet version about to be installed
	// ("v1.36.3"); "" leaves out the version-skew check.
	KubernetesVersion string
	// WindowsBuild is the build of the Windows nodes about to be added
	// ("10.0.20348"); "" leaves out the windows-build check.
	WindowsBuild string
	// Skip lists check IDs (or family IDs) to leave out.
	Skip []string
	// PlannedGuards are the DaemonSets a windows_linux_daemonset_guard
	// planned earlier in the same run will keep off Windows nodes:
	// "<namespace>/<name>", or "<namespace>/*" for every DaemonSet of the
	// namespace without an OS constraint. At plan time their check passes,
	// since the guard is applied before a node that depends on it; the
	// checks at create time, against the cluster as it is then, leave this
	// empty.
	PlannedGuards []string
}

// RunChecks gathers a snapshot of the cluster and evaluates every readiness
// check on it. It is what data "windows_cluster" reports and what
// windows_node runs at plan time.
func RunChecks(ctx context.Context, c *Client, opts CheckOptions) ([]Check, error) {
	cl, err := c.DiscoverCluster(ctx)
	if err != nil {
		return nil, err
	}
	return cl.Checks(opts), nil
}

// Checks evaluates every readiness check on the snapshot, in a stable order:
// cluster-wide checks first, then per-object checks sorted by object. The
// cluster-wide checks need nothing but the cluster, so they run whatever
// else is unknown; the checks of the image (version-skew, windows-build) run
// only with its facts (KubernetesVersion, WindowsBuild).
func (cl *Cluster) Checks(opts CheckOptions) []Check {
	all := []Check{cl.checkNodeCIDRAllocation(), cl.checkCNI()}
	all = append(all, cl.checkLinuxDaemonSets(opts.PlannedGuards)...)
	all = append(all, cl.checkLinuxHeadroom()...)
	if opts.KubernetesVersion != "" {
		all = append(all, checkVersionSkew(opts.KubernetesVersion, cl.Network.ServerVersion))
	}
	if opts.WindowsBuild != "" {
		all = append(all, checkWindowsBuild(opts.WindowsBuild, cl.WindowsNodes()))
	}
	kept := all[:0]
	for _, c := range all {
		if !Skipped(c.ID, opts.Skip) {
			kept = append(kept, c)
		}
	}
	return kept
}

// VersionSkew is the version-skew check of a kubelet version against the API
// server's version alone, for what knows the kubelet version before any node
// exists (windows_golden_image's kubernetes_version), without a snapshot.
func VersionSkew(kubelet, serverVersion string) Check {
	return checkVersionSkew(kubelet, serverVersion)
}

// Skipped reports whether id is in skip, itself or through its family.
func Skipped(id string, skip []string) bool {
	for _, s := range skip {
		if id == s || strings.HasPrefix(id, s+":") {
			return true
		}
	}
	return false
}

// Ready reports whether no check failed.
func Ready(checks []Check) bool {
	return ChecksFailed(checks) == nil
}

// ChecksFailed returns an error listing every failed check with its remedy,
// or nil when none failed. windows_node stops with it at plan time.
func ChecksFailed(checks []Check) error {
	var failed []Check
	for _, c := range checks {
		if c.Status == StatusFail {
			failed = append(failed, c)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &FailedChecksError{Checks: failed}
}

// FailedChecksError says which readiness checks failed and how to fix each.
type FailedChecksError struct {
	Checks []Check
}

func (e *FailedChecksError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cluster readiness check(s) failed:", len(e.Checks))
	for _, c := range e.Checks {
		fmt.Fprintf(&b, "\n- %s: %s", c.ID, c.Message)
		if c.Remedy != "" {
			fmt.Fprintf(&b, "\n  Fix: %s", c.Remedy)
		}
	}
	return b.String()
}

// listNames joins names for a message, shortening long lists so one message
// stays readable in a cluster of hundreds of nodes.
func listNames(names []string) string {
	const maxNames = 10
	if len(names) <= maxNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNames], ", "), len(names)-maxNames)
}
