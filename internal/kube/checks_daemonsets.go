package kube

import (
	"cmp"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The taint windows_node registers Windows nodes with, as the Kubernetes
// Windows guides recommend.
var windowsTaint = corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}

// osPlacement is where a pod template's scheduling constraints let it run.
type osPlacement int

const (
	// anyOS: nothing about the OS; the pods go wherever taints allow.
	anyOS osPlacement = iota
	// notWindows: a node selector or required affinity keeps them off Windows.
	notWindows
	// windowsOS: the template selects Windows nodes: a Windows DaemonSet.
	windowsOS
)

// templatePlacement reads the OS constraints of a pod template: the
// kubernetes.io/os (or legacy beta.kubernetes.io/os) node selector, and
// required node affinity, whose terms are alternatives, so it keeps pods off
// Windows only when every term does.
func templatePlacement(spec *corev1.PodSpec) osPlacement {
	for _, key := range []string{LabelOS, labelOSBeta} {
		if v, ok := spec.NodeSelector[key]; ok {
			if v == "windows" {
				return windowsOS
			}
			return notWindows
		}
	}
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return windowsOS
	}
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return anyOS
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return anyOS
	}
	allExclude := true
	for _, term := range terms {
		excludes, selects := termPlacement(term)
		if selects {
			return windowsOS
		}
		allExclude = allExclude && excludes
	}
	if allExclude {
		return notWindows
	}
	return anyOS
}

// termPlacement reports whether one node selector term excludes Windows
// nodes, or selects them.
func termPlacement(term corev1.NodeSelectorTerm) (excludes, selects bool) {
	for _, e := range term.MatchExpressions {
		if e.Key != LabelOS && e.Key != labelOSBeta {
			continue
		}
		hasWindows := slices.Contains(e.Values, "windows")
		switch e.Operator {
		case corev1.NodeSelectorOpIn:
			if hasWindows {
				selects = true
			} else {
				excludes = true
			}
		case corev1.NodeSelectorOpNotIn:
			if hasWindows {
				excludes = true
			}
		case corev1.NodeSelectorOpDoesNotExist:
			excludes = true // Windows nodes always carry the label
		}
	}
	return excludes, selects
}

// toleratesWindowsTaint reports a toleration that matches os=windows:NoSchedule,
// typically the catch-all `operator: Exists` without a key that kube-proxy
// and flannel carry so they run on every node.
func toleratesWindowsTaint(tolerations []corev1.Toleration) (corev1.Toleration, bool) {
	for _, t := range tolerations {
		if t.Effect != "" && t.Effect != windowsTaint.Effect {
			continue
		}
		switch {
		case t.Operator == corev1.TolerationOpExists && (t.Key == "" || t.Key == windowsTaint.Key):
			return t, true
		case t.Operator != corev1.TolerationOpExists && t.Key == windowsTaint.Key && t.Value == windowsTaint.Value:
			return t, true
		}
	}
	return corev1.Toleration{}, false
}

// checkLinuxDaemonSets: a DaemonSet without an OS constraint puts a pod on
// every node, including Windows nodes, where its Linux image cannot run
// (seed 004: kube-proxy and kube-flannel-ds crash-looping on Windows). One
// check per DaemonSet; Windows DaemonSets are left out. A DaemonSet in
// plannedGuards (see CheckOptions.PlannedGuards) passes: a guard planned in
// the same run adds its selector first.
func (cl *Cluster) checkLinuxDaemonSets(plannedGuards []string) []Check {
	var out []Check
	for i := range cl.DaemonSets {
		ds := &cl.DaemonSets[i]
		c := Check{ID: CheckLinuxDaemonSet + ":" + ds.Namespace + "/" + ds.Name}
		switch templatePlacement(&ds.Spec.Template.Spec) {
		case windowsOS:
			continue
		case notWindows:
			c.Status = StatusPass
			c.Message = fmt.Sprintf("DaemonSet %s/%s is kept off Windows nodes by its node selector or node affinity.", ds.Namespace, ds.Name)
		case anyOS:
			if !guardPlanned(plannedGuards, ds.Namespace, ds.Name) {
				c.Status, c.Message, c.Remedy = unguardedDaemonSet(ds)
				break
			}
			c.Status = StatusPass
			c.Message = fmt.Sprintf("DaemonSet %s/%s has no kubernetes.io/os node selector yet; the windows_linux_daemonset_guard planned "+
				"in this run adds kubernetes.io/os=linux before a node that depends on it is created (create checks it again).", ds.Namespace, ds.Name)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Check) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// guardPlanned reports whether plannedGuards holds namespace/name, itself or
// through namespace/*.
func guardPlanned(plannedGuards []string, namespace, name string) bool {
	return slices.Contains(plannedGuards, namespace+"/"+name) || slices.Contains(plannedGuards, namespace+"/*")
}

// unguardedDaemonSet judges a DaemonSet that no OS constraint keeps off
// Windows nodes: only the os=windows taint may.
func unguardedDaemonSet(ds *appsv1.DaemonSet) (status, message, remedy string) {
	remedy = guardRemedy(ds)
	if t, ok := toleratesWindowsTaint(ds.Spec.Template.Spec.Tolerations); ok {
		return StatusFail, fmt.Sprintf("DaemonSet %s/%s has no kubernetes.io/os node selector or affinity and tolerates the %s taint "+
			"(toleration %s), so it will start its Linux pods on every Windows node, where they fail.",
			ds.Namespace, ds.Name, taintString(windowsTaint), tolerationString(t)), remedy
	}
	return StatusWarn, fmt.Sprintf("DaemonSet %s/%s has no kubernetes.io/os node selector or affinity; only the %s taint keeps it off Windows nodes, "+
		"so a Windows node registered without that taint would run its Linux pods.", ds.Namespace, ds.Name, taintString(windowsTaint)), remedy
}

func guardRemedy(ds *appsv1.DaemonSet) string {
	return fmt.Sprintf(`Add the node selector kubernetes.io/os=linux to its pod template: `+
		`kubectl -n %s patch daemonset %s --type merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}', `+
		`or let Terraform keep it there: resource "windows_linux_daemonset_guard" { namespace = %q, names = [%q] }; `+
		`applied through the node's own provider configuration, a guard counts at plan time once the node depends on it (depends_on), which also applies it first; `+
		`applied with the administrator's configuration (provider = windows.admin, another provider process that the node's plan cannot see), apply it before the node.`,
		ds.Namespace, ds.Name, ds.Namespace, ds.Name)
}

func taintString(t corev1.Taint) string {
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

func tolerationString(t corev1.Toleration) string {
	s := "operator: " + string(t.Operator)
	if t.Operator == "" {
		s = "operator: Equal"
	}
	if t.Key == "" {
		s += " with no key"
	} else {
		s += ", key: " + t.Key
	}
	if t.Value != "" {
		s += ", value: " + t.Value
	}
	if t.Effect != "" {
		s += ", effect: " + string(t.Effect)
	}
	return "{" + s + "}"
}
