package bootstrap

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/psquote"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
)

// Files the join writes on the node.
const (
	BootstrapKubeconfig = `C:\k\bootstrap-kubeconfig`
	NodeKubeconfig      = `C:\k\kubeconfig`
	KubeletConfigFile   = `C:\k\kubelet-config.yaml`
	ClusterCAFile       = `C:\k\ca.crt`
	KubeletCertDir      = `C:\k\pki`
	// KubeletClientCert is the kubelet's client certificate once its TLS
	// bootstrap is done (certificate.NewFileStore in --cert-dir names the
	// current one kubelet-client-current.pem).
	KubeletClientCert = KubeletCertDir + `\kubelet-client-current.pem`
	KubeLogRunnerExe  = `C:\k\kube-log-runner.exe`
	KubeletLogDir     = `C:\var\log\kubelet`
)

// KubeletLogRotation: kube-log-runner (v1.36) rotates the kubelet's log at
// this size and removes rotated files older than the age
// (k8s.io/component-base/logs/kube-log-runner: -log-file-size, -log-file-age).
const (
	KubeletLogFileSize = "10Mi"
	KubeletLogFileAge  = "168h"
)

// LegacyServices are the Windows services of the earlier design (flanneld
// and kube-proxy with the node's credentials); a join removes them: the
// agents run as HostProcess pods of windows_node_networking now.
var LegacyServices = []string{"flanneld", "kube-proxy"}

// WinRMHTTPRules are the inbound firewall rules Windows Server ships for
// the WinRM HTTP listener (Domain and Private; Public from the local
// subnet), as Enable-PSRemoting and winrm quickconfig create them.
var WinRMHTTPRules = []string{"WINRM-HTTP-In-TCP", "WINRM-HTTP-In-TCP-PUBLIC"}

// JoinConfig is everything a node needs to join, discovered from the cluster
// (never typed in by hand) except what the user chose.
type JoinConfig struct {
	NodeName string // lower-case; the Kubernetes Node name
	NodeIP   string

	APIServer      string // https://host:port
	ClusterCA      []byte // PEM
	BootstrapToken string // <id>.<secret>, short-lived

	ClusterDNS    []string
	ClusterDomain string
	ClusterCIDR   string // for a mode that hands out pod subnets (NeedsClusterCIDR)
	ServiceCIDR   string

	// KubeletAdmit are the addresses and CIDRs the kubelet's firewall rule
	// admits (KubeletFirewall): the API servers' addresses and the pod
	// network. At least one.
	KubeletAdmit []string

	Labels map[string]string
	// Taints the kubelet registers the Node with (registerWithTaints).
	Taints []corev1.Taint

	CNI string // the networking mode's name (networking.Names)
	// ADDomain is the Active Directory domain the node's customization
	// joined, "" for none: the domain-joined step checks the join right
	// after join-files has deleted the answer files that held its password.
	ADDomain string
	// CNIConfList is the node's CNI configuration list, for a mode whose
	// join writes one (networking.Mode.CNIConfig).
	CNIConfList []byte

	// MaxPods and reservations shape the kubelet's allocatable.
	MaxPods int32

	// RemoteLoginsOff removes the WinRM HTTP listener and disables its
	// stock firewall rules (WinRMHTTPRules), and turns OpenSSH Server's
	// password logins off where it is installed: what a node reached only
	// through VMware Tools (transport type = "vmtools") does not need.
	RemoteLoginsOff bool

	// TimeZone is the node's Windows time zone ID (timezone.IDs);
	// timezone.Default when empty.
	TimeZone string

	// Proxy, when set, is containerd's and the kubelet's service
	// environment; its NoProxy is already complete (CompleteNoProxy).
	Proxy Proxy
}

var nodeNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (c JoinConfig) withDefaults() JoinConfig {
	if c.ClusterDomain == "" {
		c.ClusterDomain = "cluster.local"
	}
	if c.TimeZone == "" {
		c.TimeZone = timezone.Default
	}
	return c
}

func (c JoinConfig) validate() error {
	switch {
	case !nodeNamePattern.MatchString(c.NodeName):
		return fmt.Errorf("node name %q is not a lower-case DNS label", c.NodeName)
	case net.ParseIP(c.NodeIP) == nil:
		return fmt.Errorf("node IP %q is not an IP address", c.NodeIP)
	case !strings.HasPrefix(c.APIServer, "https://"):
		return fmt.Errorf("API server %q is not an https URL", c.APIServer)
	case len(c.ClusterCA) == 0:
		return fmt.Errorf("the cluster CA certificate is empty")
	case !regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`).MatchString(c.BootstrapToken):
		return fmt.Errorf("the bootstrap token is not in the <6>.<16> format")
	case len(c.ClusterDNS) == 0:
		return fmt.Errorf("no cluster DNS service IP")
	case len(c.KubeletAdmit) == 0:
		return fmt.Errorf("no address for the kubelet's firewall rule to admit (the API servers' addresses, the pod network)")
	case !timezone.Valid(c.TimeZone):
		return fmt.Errorf("time zone %q is not a Windows time zone ID", c.TimeZone)
	}
	mode, ok := networking.Lookup(c.CNI)
	switch {
	case !ok:
		return fmt.Errorf("unknown CNI %q", c.CNI)
	case mode.NeedsClusterCIDR() && c.ClusterCIDR == "":
		return fmt.Errorf("%s needs the cluster CIDR", c.CNI)
	case mode.CNIConfPath() != "" && !json.Valid(c.CNIConfList):
		return fmt.Errorf("%s needs the node's CNI configuration list", c.CNI)
	}
	// The labels go into the kubelet's command line (--node-labels=k=v,...):
	// the kubelet's own rules keep a comma, an equals sign, a quote or a
	// line break out of them.
	for _, a := range c.KubeletAdmit {
		if net.ParseIP(a) == nil {
			if _, _, err := net.ParseCIDR(a); err != nil {
				return fmt.Errorf("kubelet firewall address %q is neither an IP address nor a CIDR", a)
			}
		}
	}
	for k, v := range c.Labels {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			return fmt.Errorf("node label %q=%q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	return nil
}

// JoinSteps renders the ordered steps that join a node prepared from a golden
// image. Re-running them converges: files are rewritten with the same
// content, services are re-created with the same command lines.
func JoinSteps(cfg JoinConfig) ([]Step, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	bootstrapKubeconfig, err := cfg.bootstrapKubeconfig()
	if err != nil {
		return nil, err
	}
	kubeletConfig, err := cfg.kubeletConfiguration()
	if err != nil {
		return nil, err
	}
	var steps []Step
	add := func(name, tmpl string, data any, secrets ...string) error {
		script, err := render(name, tmpl, data)
		if err != nil {
			return err
		}
		steps = append(steps, Step{Name: name, Script: script, Secrets: secrets, Rerunnable: true})
		return nil
	}
	// The token travels in the bootstrap kubeconfig, which is uploaded
	// (Step.Files), never written from a script: Windows PowerShell logs a
	// script block to event 4104 of Microsoft-Windows-PowerShell/Operational
	// when its text has a suspicious word, and every block when a site turns
	// script block logging on (the CIS benchmarks ask for it), and local
	// users may read that log. Its secret half is what authenticates; the
	// redactor also knows the file's encodings.
	_, tokenSecret, _ := strings.Cut(cfg.BootstrapToken, ".")
	joinSecrets := []string{cfg.BootstrapToken, tokenSecret, base64.StdEncoding.EncodeToString(bootstrapKubeconfig)}
	// The files that hold no secret are written by the script: one round
	// trip instead of an upload's three each.
	files := []fileData{
		{Path: ClusterCAFile, Base64: base64.StdEncoding.EncodeToString(cfg.ClusterCA)},
		{Path: KubeletConfigFile, Base64: base64.StdEncoding.EncodeToString(kubeletConfig)},
	}
	mode, _ := networking.Lookup(cfg.CNI)
	if path := mode.CNIConfPath(); path != "" {
		files = append(files, fileData{Path: path, Base64: base64.StdEncoding.EncodeToString(cfg.CNIConfList)})
	}
	// What this node mode runs, installed by the golden image: a node cloned
	// from an image of the earlier design lacks some, and is told so.
	needs := append([]string{KubeletExe, KubeLogRunnerExe}, mode.HostPrograms()...)
	if err := add("join-files", "join-files", map[string]any{
		"Dirs": union([]string{KubernetesDir, KubeletCertDir, CNIConfDir, KubeletLogDir}, HardenedDirs), "Files": files, "Needs": needs,
		"AnswerFiles": AnswerFiles, "Harden": HardenedDirs,
	}, joinSecrets...); err != nil {
		return nil, err
	}
	steps[len(steps)-1].Files = []File{{Path: BootstrapKubeconfig, Content: bootstrapKubeconfig}}
	if cfg.ADDomain != "" {
		step, err := DomainJoinedStep(cfg.ADDomain)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	if err := add("kubelet-firewall", "kubelet-firewall", map[string]any{"Rule": KubeletFirewall, "Admit": cfg.KubeletAdmit}); err != nil {
		return nil, err
	}
	if cfg.RemoteLoginsOff {
		if err := add("remote-logins-off", "remote-logins-off", map[string]any{"Rules": WinRMHTTPRules}); err != nil {
			return nil, err
		}
	}
	if err := add("time-zone", "time-zone", map[string]any{"TimeZone": cfg.TimeZone}); err != nil {
		return nil, err
	}
	if err := add("legacy-services", "legacy-services", map[string]any{"Services": LegacyServices}); err != nil {
		return nil, err
	}
	if cfg.Proxy.IsSet() {
		// containerd pulls the images (the pause and HostProcess images,
		// the pods'): it restarts with the node's proxy before the kubelet
		// asks it for any.
		if err := add("containerd-proxy", "service-proxy", map[string]any{"Service": "containerd", "Environment": cfg.Proxy.Environment()}); err != nil {
			return nil, err
		}
	}
	if err := add("kubelet-service", "kubelet-service", map[string]any{
		"Environment": cfg.Proxy.Environment(),
		"Name":        "kubelet", "Display": "Kubernetes kubelet", "Command": cfg.KubeletServiceCommand(), "DependOn": "containerd",
		// Upstream's kubelet scripts set no recovery actions (image-builder
		// sc.yml, sig-windows-tools PrepareNode.ps1); these mirror
		// containerd's own registration (restart, restart, reset after a day)
		// so a kubelet that exits comes back.
		"Failure": "restart/10000/restart/10000/restart/30000", "Reset": "86400",
	}); err != nil {
		return nil, err
	}
	return steps, nil
}

type fileData struct{ Path, Base64 string }

// HardenedDirs are the directories whose DACL the join restricts to
// LocalSystem and Administrators, inheritance removed, before it writes the
// node's credentials: the kubelet's files and its private key (C:\k,
// C:\k\pki), the CNI configuration and plugins the kubelet runs as
// LocalSystem (C:\etc\cni, C:\opt\cni) and containerd's configuration. On
// Windows Server a folder made at C:\ lets every local user read its files
// and add new ones (C:\ gives Users read and execute, and "create files" and
// "create folders" beneath). Upstream's Windows recipes leave these
// directories as created (sig-windows-tools PrepareNode.ps1, image-builder
// roles/kubernetes/tasks/kubelet.yml); this follows what kubeadm and the CIS
// Kubernetes Benchmark ask of a Linux node instead (section 4.1: the kubelet's
// kubeconfig and configuration readable by root only, its certificate
// directory and keys 600), on Windows' terms.
var HardenedDirs = []string{KubernetesDir, KubeletCertDir, parentDir(CNIConfDir), CNIConfDir,
	parentDir(CNIBinDir), CNIBinDir, ContainerdDir}

// union is a with the elements of b it lacks appended.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, e := range b {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// parentDir is a Windows path's directory.
func parentDir(p string) string { return p[:strings.LastIndexByte(p, '\\')] }

// AfterReadySteps run once the Node is Ready: the kubelet holds its own
// client certificate, so the bootstrap kubeconfig (and the token in it)
// goes, as kubeadm deletes /etc/kubernetes/bootstrap-kubelet.conf after the
// TLS bootstrap (cmd/kubeadm/app/cmd/phases/join/kubelet.go). The kubelet
// reads --bootstrap-kubeconfig only while its --kubeconfig holds no valid
// certificate (pkg/kubelet/certificate/bootstrap LoadClientCert), so a
// restart does not need it.
func AfterReadySteps() ([]Step, error) {
	script, err := render("join-cleanup", "join-cleanup", map[string]any{
		"Cert": KubeletClientCert, "Bootstrap": BootstrapKubeconfig,
	})
	if err != nil {
		return nil, err
	}
	return []Step{{Name: "join-cleanup", Script: script, Rerunnable: true}}, nil
}

// RepairSteps start the node's services again where they stopped
// (containerd, then the kubelet): an update repairing a node whose kubelet
// stopped, found NotReady by a refresh.
func RepairSteps() ([]Step, error) {
	script, err := render("repair-services", "repair-services", map[string]any{"Containerd": "containerd", "Kubelet": "kubelet"})
	if err != nil {
		return nil, err
	}
	return []Step{{Name: "repair-services", Script: script, Rerunnable: true}}, nil
}

// KubeletServiceCommand is the kubelet service's binPath: kube-log-runner
// (first-party, from the same release as the kubelet) writes the kubelet's
// output to KubeletLogFile, rotated, since a service has no stdout and
// kubelet v1.36 has no --log-file (KEP-2845); the kubelet itself runs with
// --windows-service. This is image-builder's default since it moved off
// nssm (kubernetes-sigs/image-builder 98cbbbfe, roles/kubernetes/tasks/sc.yml).
func (c JoinConfig) KubeletServiceCommand() string {
	return strings.Join([]string{
		quoteArg(KubeLogRunnerExe),
		"--log-file=" + quoteArg(KubeletLogFile),
		"--log-file-size=" + KubeletLogFileSize,
		"--log-file-age=" + KubeletLogFileAge,
		c.KubeletCommand(),
	}, " ")
}

// KubeletCommand is the kubelet service's command line: current flags only
// (every removed flag of the recipes — --network-plugin, --cni-bin-dir,
// --image-pull-progress-deadline, --pod-infra-container-image — stops a
// current kubelet), and none that are deprecated in favour of the
// configuration file (the runtime endpoint and the taints live there).
func (c JoinConfig) KubeletCommand() string {
	args := []string{
		quoteArg(KubeletExe),
		"--windows-service",
		"--bootstrap-kubeconfig=" + quoteArg(BootstrapKubeconfig),
		"--kubeconfig=" + quoteArg(NodeKubeconfig),
		"--config=" + quoteArg(KubeletConfigFile),
		"--cert-dir=" + quoteArg(KubeletCertDir),
		quoteArg("--hostname-override=" + c.NodeName),
		quoteArg("--node-ip=" + c.NodeIP),
		"--v=2",
	}
	if labels := joinLabels(c.Labels); labels != "" {
		args = append(args, quoteArg("--node-labels="+labels))
	}
	return strings.Join(args, " ")
}

// bootstrapKubeconfig holds the short-lived bootstrap token, never an admin
// credential: the kubelet trades it for its own certificate.
func (c JoinConfig) bootstrapKubeconfig() ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubernetes"] = &clientcmdapi.Cluster{Server: c.APIServer, CertificateAuthorityData: c.ClusterCA}
	cfg.AuthInfos["tls-bootstrap-token-user"] = &clientcmdapi.AuthInfo{Token: c.BootstrapToken}
	cfg.Contexts["tls-bootstrap-token-user@kubernetes"] = &clientcmdapi.Context{Cluster: "kubernetes", AuthInfo: "tls-bootstrap-token-user"}
	cfg.CurrentContext = "tls-bootstrap-token-user@kubernetes"
	return clientcmd.Write(*cfg)
}

// kubeletConfiguration is the node's KubeletConfiguration: DNS from the
// cluster's own Service, the Windows-specific settings (no cgroups, no
// node-allocatable enforcement) and webhook authentication against the
// cluster CA.
func (c JoinConfig) kubeletConfiguration() ([]byte, error) {
	maxPods := c.MaxPods
	if maxPods == 0 {
		maxPods = 110
	}
	// A map, not kubeletv1beta1.KubeletConfiguration: the typed struct
	// marshals every zero duration ("0s") and drops the empty
	// enforceNodeAllocatable list that Windows needs (the default, [pods],
	// fails without cgroups).
	return yaml.Marshal(map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": ClusterCAFile},
		},
		"authorization":            map[string]any{"mode": "Webhook"},
		"clusterDNS":               c.ClusterDNS,
		"clusterDomain":            c.ClusterDomain,
		"containerRuntimeEndpoint": ContainerdPipe,
		"cgroupsPerQOS":            false,
		"enforceNodeAllocatable":   []string{},
		"resolvConf":               "",
		"hairpinMode":              "promiscuous-bridge",
		"rotateCertificates":       true,
		"maxPods":                  maxPods,
		// Registered with the Node, so no pod lands before the taints exist.
		"registerWithTaints": registerTaints(c.Taints),
	})
}

// registerTaints is the KubeletConfiguration's registerWithTaints: key,
// value and effect (a taint's timeAdded is the API server's to set).
func registerTaints(taints []corev1.Taint) []map[string]string {
	out := []map[string]string{}
	for _, t := range taints {
		taint := map[string]string{"key": t.Key, "effect": string(t.Effect)}
		if t.Value != "" {
			taint["value"] = t.Value
		}
		out = append(out, taint)
	}
	return out
}

// joinLabels renders labels sorted, for a stable command line.
func joinLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// quoteArg writes one argument of a service command line (binPath) as the
// services' Go programs read it back (psquote.Arg); validate refused what
// no command line can hold.
func quoteArg(s string) string { return psquote.Arg(s) }

// KubeletLogFile is where the node's kubelet log is kept; windows_node reads
// its last lines from here when a node never becomes Ready.
const KubeletLogFile = `C:\var\log\kubelet\kubelet.log`

// ProbeEvidenceStep gathers a node's network evidence after its network
// probe failed: its HNS networks, endpoints and load balancers, and the last
// lines of each log file in logs (the node agents' container logs).
func ProbeEvidenceStep(logs []string) (Step, error) {
	script, err := render("probe-evidence", "probe-evidence", map[string]any{"Logs": logs, "Lines": ProbeEvidenceLogLines})
	if err != nil {
		return Step{}, err
	}
	return Step{Name: "probe-evidence", Script: script, Rerunnable: true}, nil
}

// ProbeEvidenceLogLines is how many of each agent log's last lines the
// probe's evidence carries.
const ProbeEvidenceLogLines = 10

// RebootStep restarts the guest (a node's reboot after its join): it prints
// RebootMarker and asks Windows to restart, as the image steps that need a
// restart do.
func RebootStep() (Step, error) {
	script, err := render("reboot", "reboot", map[string]any{"Marker": RebootMarker})
	if err != nil {
		return Step{}, err
	}
	return Step{Name: "reboot", Script: script, MayReboot: true}, nil
}
