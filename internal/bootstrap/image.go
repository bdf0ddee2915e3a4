package bootstrap

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	tomlv2 "github.com/pelletier/go-toml/v2"

	"github.com/wincluster/terraform-provider-windows/internal/imageref"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// Windows paths the image and the join agree on.
const (
	KubernetesDir  = `C:\k`
	DownloadDir    = `C:\k\downloads`
	ContainerdDir  = `C:\Program Files\containerd`
	ContainerdExe  = `C:\Program Files\containerd\bin\containerd.exe`
	ContainerdConf = `C:\Program Files\containerd\config.toml`
	CNIBinDir      = networking.CNIBinDir
	CNIConfDir     = networking.CNIConfDir
	KubeletExe     = `C:\k\kubelet.exe`
	KubeProxyExe   = networking.KubeProxyExe
	ToolsConf      = `C:\ProgramData\VMware\VMware Tools\tools.conf`
	ManifestFile   = `C:\k\image-manifest.json`
	UnattendFile   = `C:\Windows\System32\Sysprep\unattend.xml`
	SysprepExe     = `C:\Windows\System32\Sysprep\sysprep.exe`
	ContainerdPipe = `npipe:////./pipe/containerd-containerd`
	// DefaultPause is the first registry.k8s.io/pause with a Windows
	// Server 2025 (10.0.26100) entry in its manifest list besides 2019's
	// and 2022's (kubernetes/kubernetes#136960 and #138195); 3.10 and
	// 3.10.1 have none. containerd's own default since v2.3.0 (containerd
	// 05d3b315). On a 2025 host containerd would run an older pause's 2022
	// entry under process isolation (containerd/platforms: a 26100 host
	// runs 20348 images), but a Hyper-V isolated pod then mixes a 2022
	// sandbox with 2025 layers and fails with HCS_E_IMAGE_MISMATCH
	// (kubernetes-sigs/windows-testing#557). Pinned by the digest of the
	// manifest list registry.k8s.io serves for the tag (what `docker pull
	// registry.k8s.io/pause:3.10.2` prints, as kubernetes/website's
	// "Pull an Image from a Private Registry" page quotes it), so a
	// registry or mirror that serves other content under the tag is
	// refused by containerd rather than run as every pod's sandbox.
	DefaultPause    = "registry.k8s.io/pause:3.10.2@sha256:f548e0e8e3dc1896ca956272154dde3314e8cc4fde0a57577ee9fa1c63f5baf4"
	DefaultBaseURL  = "https://dl.k8s.io/release"
	KubeletFirewall = "kubelet-10250"
)

// Artifact is a file the image downloads on the guest and verifies by
// SHA-256 before using it.
type Artifact struct {
	Name   string // what it is, for messages: "containerd", "kubelet"
	URL    string
	SHA256 string // lower- or upper-case hex
	// Path is where the verified file ends up on the guest.
	Path string
	// ExtractTo, when set, unpacks the archive (.zip, .tar.gz or .tgz) there.
	ExtractTo string
	// Member and InstallAs, when set, move one unpacked file (a path
	// relative to ExtractTo) to its final name: the flannel CNI plugin ships
	// as flannel-amd64.exe, and the CNI configuration's "type": "flannel"
	// runs flannel.exe.
	Member, InstallAs string
}

// ImageConfig is everything a golden image build needs.
type ImageConfig struct {
	KubernetesVersion string // v1.36.3
	Containerd        Artifact
	Kubelet           Artifact
	KubeProxy         Artifact
	// KubeLogRunner is kube-log-runner.exe of the same release: the kubelet
	// service's wrapper that keeps its log (a service has no console).
	KubeLogRunner Artifact
	CNIPlugins    Artifact
	Additional    []Artifact
	PauseImage    string
	PrepullImages []string
	// SSHAuthorizedKey, when set, enables the OpenSSH server with this key
	// for the Administrator account.
	SSHAuthorizedKey string
	// Updates are installed first, in order, each in a step of its own
	// that restarts the guest when the package needs it (updates.go).
	Updates []WindowsUpdate
	// Online, when set, installs updates through the Windows Update Agent
	// after the packages (online_updates.go).
	Online *OnlineUpdates
	// Proxy, when set, carries the build's downloads, WinHTTP's (Windows
	// Update's) traffic and containerd's (the prepulls'): proxy.go.
	Proxy Proxy
	// Registry, when not empty, sends containerd's pulls to mirrors with
	// their credentials (registry.go); the image build's own pulls go
	// through them too.
	Registry Registry
}

var (
	sha256Pattern     = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	k8sVersionPattern = regexp.MustCompile(`^v1\.[0-9]+\.[0-9]+$`)
)

// KubernetesArtifactURL is where the upstream release (or a mirror laid out
// the same way, for air-gapped sites) serves a Windows binary.
func KubernetesArtifactURL(baseURL, version, binary string) string {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	return strings.TrimRight(baseURL, "/") + "/" + version + "/bin/windows/amd64/" + binary
}

// Validate reports the first problem with an artifact, naming it.
func (a Artifact) Validate() error {
	if a.URL == "" {
		return fmt.Errorf("%s: the download URL is empty", a.Name)
	}
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: %q is not an http(s) URL", a.Name, a.URL)
	}
	if strings.ContainsAny(a.URL, "\"`$'") {
		// The URL is quoted into PowerShell; these characters would change its meaning.
		return fmt.Errorf("%s: %q contains a quote, backtick or $; percent-encode them", a.Name, a.URL)
	}
	if !sha256Pattern.MatchString(a.SHA256) {
		return fmt.Errorf("%s: %q is not a SHA-256 checksum (64 hex digits); every artifact is verified before use", a.Name, a.SHA256)
	}
	if a.Path == "" {
		return fmt.Errorf("%s: no destination path", a.Name)
	}
	if a.ExtractTo != "" && archiveKind(a.URL) == "" {
		return fmt.Errorf("%s: %s is not a .zip, .tar.gz or .tgz archive", a.Name, a.URL)
	}
	return nil
}

func archiveKind(u string) string {
	p := strings.ToLower(u)
	if parsed, err := url.Parse(u); err == nil {
		p = strings.ToLower(parsed.Path)
	}
	switch {
	case strings.HasSuffix(p, ".zip"):
		return "zip"
	case strings.HasSuffix(p, ".tar.gz"), strings.HasSuffix(p, ".tgz"):
		return "tar"
	}
	return ""
}

// DownloadPath is where an archive lands before it is unpacked: the last
// segment of the URL's path as it is written (not percent-decoded: %00, %5C
// or %2E%2E would otherwise put a NUL, a backslash or ".." into the path and
// the file outside DownloadDir), with every character but letters, digits,
// '.', '-' and '_' replaced by '_'.
func DownloadPath(u string) string {
	name := path.Base(u)
	if parsed, err := url.Parse(u); err == nil {
		name = path.Base(parsed.EscapedPath())
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, name)
	if strings.Trim(name, ".") == "" {
		name = "download"
	}
	return DownloadDir + `\` + name
}

// ImageSteps renders the ordered steps of a golden image build (everything
// but sysprep, which SysprepSteps renders).
func ImageSteps(cfg ImageConfig) ([]Step, error) {
	if !k8sVersionPattern.MatchString(cfg.KubernetesVersion) {
		return nil, fmt.Errorf("kubernetes_version %q is not a version like v1.36.3", cfg.KubernetesVersion)
	}
	artifacts := append([]Artifact{cfg.Containerd, cfg.Kubelet, cfg.KubeProxy, cfg.KubeLogRunner, cfg.CNIPlugins}, cfg.Additional...)
	for _, a := range artifacts {
		if err := a.Validate(); err != nil {
			return nil, err
		}
	}
	if cfg.PauseImage == "" {
		cfg.PauseImage = DefaultPause
	}
	if err := imageref.Validate("pause_image", cfg.PauseImage); err != nil {
		return nil, err
	}
	for _, img := range cfg.PrepullImages {
		if err := imageref.Validate("prepull_images", img); err != nil {
			return nil, err
		}
	}

	if err := cfg.Registry.Validate(); err != nil {
		return nil, err
	}

	var steps []Step
	add := func(name, tmpl string, data any, mayReboot bool) error {
		script, err := render(name, tmpl, data)
		if err != nil {
			return err
		}
		steps = append(steps, Step{Name: name, Script: script, MayReboot: mayReboot})
		return nil
	}
	dirs := []string{KubernetesDir, DownloadDir, ContainerdDir, CNIBinDir, CNIConfDir}
	if err := add("prepare", "prepare", map[string]any{"Dirs": dirs}, false); err != nil {
		return nil, err
	}
	agentDirs, err := AgentDirsStep()
	if err != nil {
		return nil, err
	}
	steps = append(steps, agentDirs)
	if cfg.Proxy.IsSet() {
		winhttp, err := WinHTTPProxyStep(cfg.Proxy)
		if err != nil {
			return nil, err
		}
		steps = append(steps, winhttp)
	}
	updates, err := updateSteps(cfg.Updates, cfg.Proxy)
	if err != nil {
		return nil, err
	}
	steps = append(steps, updates...)
	readBack, err := updatesInstalledStep(cfg.Updates)
	if err != nil {
		return nil, err
	}
	steps = append(steps, readBack...)
	online, err := onlineUpdateSteps(cfg.Online)
	if err != nil {
		return nil, err
	}
	steps = append(steps, online...)
	if err := add("containers-feature", "containers-feature", map[string]any{"Marker": RebootMarker}, true); err != nil {
		return nil, err
	}
	for _, a := range artifacts {
		data := map[string]any{
			"A": a, "Hash": strings.ToUpper(a.SHA256), "Download": a.Path + ".download",
			"Kind": archiveKind(a.URL), "Proxy": cfg.Proxy.For(a.URL), "ProxySet": cfg.Proxy.IsSet(),
		}
		if a.ExtractTo != "" {
			data["Download"] = DownloadPath(a.URL) + ".download"
		}
		if err := add("install-"+a.Name, "artifact", data, false); err != nil {
			return nil, err
		}
	}
	if !cfg.Registry.Empty() {
		step, err := RegistryStep(cfg.Registry)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	if err := add("containerd-service", "containerd-service", map[string]any{
		"Exe": ContainerdExe, "Conf": ContainerdConf, "Config": containerdConfig(cfg.PauseImage, ContainerdVersion(cfg.Containerd.URL), cfg.Registry),
	}, false); err != nil {
		return nil, err
	}
	steps[len(steps)-1].Secrets = registrySecrets(cfg.Registry)
	if cfg.Proxy.IsSet() {
		if err := add("containerd-proxy", "service-proxy", map[string]any{"Service": "containerd", "Environment": cfg.Proxy.Environment()}, false); err != nil {
			return nil, err
		}
	}
	if len(cfg.PrepullImages) > 0 {
		if err := add("prepull-images", "prepull-images", prepullData(cfg), false); err != nil {
			return nil, err
		}
		steps[len(steps)-1].Secrets = registrySecrets(cfg.Registry)
	}
	if err := add("vmware-tools", "vmware-tools", map[string]any{"Path": ToolsConf, "Dir": ToolsConf[:strings.LastIndexByte(ToolsConf, '\\')]}, false); err != nil {
		return nil, err
	}
	// It merges into tools.conf and never restarts VMware Tools: a run
	// cut short is run again (guest.Session.Run).
	steps[len(steps)-1].Rerunnable = true
	if err := add("firewall", "firewall", map[string]any{"Rule": KubeletFirewall}, false); err != nil {
		return nil, err
	}
	if cfg.SSHAuthorizedKey != "" {
		if err := add("openssh", "openssh", map[string]any{"Key": strings.TrimSpace(cfg.SSHAuthorizedKey)}, false); err != nil {
			return nil, err
		}
	}
	if err := add("verify", "verify", map[string]any{"Artifacts": artifacts, "Exe": ContainerdExe}, false); err != nil {
		return nil, err
	}
	if err := add("windows-build", "windows-build", nil, false); err != nil {
		return nil, err
	}
	return steps, nil
}

// ContainerdConfig is the containerd config.toml of the image: the CRI
// plugin with the pause image and the CNI directories the join writes to.
// containerd 2.x reads version 3 (containerd docs/cri/config.md: the images
// and runtime CRI plugins, bin_dirs since v2.1); containerd 1.7, which
// refuses version 3, gets version 2. The default runtime on Windows is
// runhcs-wcow-process in both.
func ContainerdConfig(pause, containerdVersion string) string {
	return containerdConfig(pause, containerdVersion, Registry{})
}

// containerdConfig is ContainerdConfig with the registry section
// (registryConfig).
func containerdConfig(pause, containerdVersion string, reg Registry) string {
	if strings.HasPrefix(containerdVersion, "1.") {
		return strings.Join(append([]string{
			`version = 2`,
			`[plugins."io.containerd.grpc.v1.cri"]`,
			`  sandbox_image = ` + tomlString(pause),
			`  [plugins."io.containerd.grpc.v1.cri".containerd]`,
			`    default_runtime_name = "runhcs-wcow-process"`,
			`  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runhcs-wcow-process]`,
			`    runtime_type = "io.containerd.runhcs.v1"`,
			`  [plugins."io.containerd.grpc.v1.cri".cni]`,
			`    bin_dir = "C:\\opt\\cni\\bin"`,
			`    conf_dir = "C:\\etc\\cni\\net.d"`,
		}, append(registryConfig(reg, true), ``)...), "\r\n")
	}
	return strings.Join(append([]string{
		`version = 3`,
		`[plugins.'io.containerd.cri.v1.images'.pinned_images]`,
		`  sandbox = ` + tomlString(pause),
		`[plugins.'io.containerd.cri.v1.runtime'.cni]`,
		`  bin_dirs = ['` + CNIBinDir + `']`,
		`  conf_dir = '` + CNIConfDir + `'`,
	}, append(registryConfig(reg, false), ``)...), "\r\n")
}

// tomlString is s as a TOML string, quoted and escaped by a TOML encoder
// (go-toml v2, the library containerd 2 reads its configuration with), so
// that no value can end the string or the line and add configuration of
// its own. The references ImageSteps accepts need no escaping; this holds
// even if one that does slipped past it.
func tomlString(s string) string {
	b, err := tomlv2.Marshal(struct {
		V string `toml:"v"`
	}{s})
	if err != nil { // a string always encodes
		panic(err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(b), "v = "), "\n")
}

// ContainerdSupported reports whether a containerd version is in
// containerd's support matrix for Kubernetes 1.36 (RELEASES.md: 2.3.0+,
// 2.2.0+; 1.7 reached end of life). "" (not read from the URL) is not
// judged.
func ContainerdSupported(version string) bool {
	return version == "" || !strings.HasPrefix(version, "1.") && !strings.HasPrefix(version, "2.0.") && !strings.HasPrefix(version, "2.1.")
}

// ParseWindowsBuild reads the windows-build step's output ("10.0.20348.2340").
// Its error does not quote the output: the caller has it, as evidence.
// The build (without its revision) becomes the node's
// node.kubernetes.io/windows-build label, so what the guest reports must be
// a build winversion accepts and a revision of at most nine digits (the
// label value has at most 63 characters).
func ParseWindowsBuild(stdout string) (string, error) {
	m := windowsBuildOutput.FindStringSubmatch(stdout)
	if m == nil {
		return "", errors.New("the guest did not report its Windows build")
	}
	if err := winversion.ValidateBuild(winversion.TrimUBR(m[1])); err != nil || len(m[2]) > 9 {
		return "", errors.New("the guest reported a Windows build that is not of the form 10.0.<build>.<revision>")
	}
	return m[1], nil
}

var windowsBuildOutput = regexp.MustCompile(`WINDOWS-BUILD=(10\.0\.[0-9]+\.([0-9]+))`)

// ContainerdVersion reads a version from a containerd release URL
// (".../containerd-1.7.24-windows-amd64.tar.gz" -> "1.7.24").
func ContainerdVersion(u string) string {
	m := regexp.MustCompile(`containerd-v?([0-9]+\.[0-9]+\.[0-9]+[^-/]*)-windows`).FindStringSubmatch(u)
	if m == nil {
		return ""
	}
	return m[1]
}

// NormalizeSHA256 returns the lower-case form of a hex checksum.
func NormalizeSHA256(s string) (string, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != 32 {
		return "", fmt.Errorf("%q is not a SHA-256 checksum (64 hex digits)", s)
	}
	return hex.EncodeToString(b), nil
}

// WindowsBuildStep reads the guest's build with its update revision; parse
// its output with ParseWindowsBuild.
func WindowsBuildStep() (Step, error) {
	script, err := render("windows-build", "windows-build", nil)
	return Step{Name: "windows-build", Script: script, Rerunnable: true}, err // it only reads
}
