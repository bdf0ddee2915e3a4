package bootstrap

import (
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// AgentRoots are the folders at C:\ under which every directory an agent
// running as LocalSystem reads or writes lies, outside C:\Program Files and
// C:\Windows: the kubelet's (C:\k, its root directory C:\var\lib\kubelet,
// its logs and the pods' logs under C:\var\log), the CNI configuration and
// plugins (C:\etc\cni, C:\opt\cni), and those of the HostProcess agents of
// windows_node_networking (each mode's networking.HostDirsMode: flannel's
// kubeconfigs under C:\var\lib\kube-proxy-windows and
// C:\var\lib\kube-flannel-windows, C:\etc\kube-flannel, C:\run\flannel,
// C:\sourcevip); a mode's directory under no root adds its own. The image build
// creates each with a protected DACL (LocalSystem and Administrators full
// control, nothing inherited) and Administrators as owner (AgentDirsStep),
// so what lies beneath inherits only those two.
//
// Why: a folder made at C:\ inherits C:\'s DACL, which lets every local
// user create folders and files beneath it and makes the user the owner of
// what it creates (learn.microsoft.com "icacls" prints the stock ACL;
// internal/sandbox/winsim/acl.go models it); an owner keeps READ_CONTROL
// and WRITE_DAC whatever the DACL says. A user who created C:\var before
// the agents could have read their kubeconfigs or placed the files they
// trust. Upstream's Windows node recipes create these directories as the
// agents need them, with C:\'s inherited ACL (sig-windows-tools
// PrepareNode.ps1, image-builder roles/kubernetes); this follows what the
// CIS Kubernetes Benchmark asks of a Linux node's files (section 4.1,
// owned by root, writable by root only), on Windows' terms.
var AgentRoots = agentRoots()

// AgentDirs are the directories the agents use beneath AgentRoots, created
// with them so none is left for anyone else to create first.
var AgentDirs = union([]string{
	KubernetesDir, DownloadDir, KubeletCertDir,
	`C:\var\lib\kubelet`,
	KubeletLogDir, `C:\var\log\pods`, `C:\var\log\containers`,
	CNIConfDir,
	CNIBinDir,
}, networking.HostDirs())

// agentRoots are the kubelet's and the CNI's roots, and the root (the
// folder at C:\) of every mode's directory.
func agentRoots() []string {
	roots := []string{KubernetesDir, `C:\var`, `C:\etc`, `C:\run`, `C:\opt`}
	for _, d := range networking.HostDirs() {
		parts := strings.SplitN(d, `\`, 3)
		if len(parts) >= 2 {
			roots = union(roots, []string{parts[0] + `\` + parts[1]})
		}
	}
	return roots
}

// AgentDirsStep creates AgentDirs and protects AgentRoots: each root's
// owner becomes Administrators and every explicit ACE beneath it goes
// (icacls /setowner and /reset with /T: an object a user planted before
// loses its owner, whose implicit WRITE_DAC would let it grant itself
// access again, and its own ACEs, which /grant:r leaves in place since it
// replaces only the named accounts' grants), then the root's DACL is
// protected with LocalSystem and Administrators only (/inheritance:r
// /grant:r). The owner goes first: the administrators may lack WRITE_DAC on
// a planted object until they own it. Rerunnable: it converges.
func AgentDirsStep() (Step, error) {
	script, err := render("agent-dirs", "agent-dirs", map[string]any{"Dirs": AgentDirs, "Roots": AgentRoots})
	if err != nil {
		return Step{}, err
	}
	return Step{Name: "agent-dirs", Script: script, Rerunnable: true}, nil
}
