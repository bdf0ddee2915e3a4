// Command kubeletcheck judges a Windows kubelet's command line and
// KubeletConfiguration with the kubelet's own code, for the sandbox's
// simulated kubelet (internal/sandbox/kubeletsim), which must not hand-write what
// kubelet.exe accepts.
//
// It reads one JSON request on stdin:
//
//	{"args": ["--config=C:\\k\\config.yaml", ...],
//	 "files": {"C:\\k\\config.yaml": "<content>" or null when the host has no such file}}
//
// and writes one JSON Result on stdout (exit code 0 whenever it could
// judge). Paths are the host's Windows paths: the simulator's disks are
// virtual, so file contents travel in the request.
//
// What it runs is cmd/kubelet/app/server.go's NewKubeletCommand RunE up to
// the point where the kubelet starts working: the same flag set
// (options.NewKubeletFlags().AddFlags, options.AddKubeletConfigFlags,
// options.AddGlobalFlags, --help) and normalize function, the same error
// wrapping, options.ValidateKubeletFlags, the config file loader
// (configfiles.NewFsLoader: strict decoding with the lenient fallback),
// kubeletConfigFlagPrecedence (re-parsing the command line over the loaded
// file) and validation.ValidateKubeletConfiguration.
//
// This binary is built for Linux, so where the kubelet's code differs per OS
// the Windows behaviour is hand-kept here, each with its source (see
// windows.go): the Windows-only flags, the Linux-only cadvisor flags, the
// Windows default eviction thresholds and validation_windows.go's rules.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfiginternal "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/configfiles"
	utilfs "k8s.io/kubernetes/pkg/util/filesystem"
)

// Request is what the simulator sends.
type Request struct {
	Args  []string           `json:"args"`
	Files map[string]*string `json:"files"`
}

// Result is what the kubelet would make of the request.
type Result struct {
	// Error is the error kubelet.exe exits with before it starts working
	// ("failed to parse kubelet flag: unknown flag: --x"), "" when none.
	Error string `json:"error,omitempty"`
	// MissingFile is set, with nothing else, when judging needs a file the
	// request did not carry (neither content nor null): ask again with it.
	MissingFile string `json:"missingFile,omitempty"`
	// Output is what the kubelet writes before and while validating, in
	// order: pflag's deprecation lines ("Flag --x has been deprecated, ..."),
	// the lenient-decoding notice, validation_windows.go's warnings.
	Output []string `json:"output,omitempty"`
	// Changed lists the flags given on the command line with their values
	// (what cliflag.PrintFlags shows), by normalized name.
	Changed map[string]string `json:"changed,omitempty"`
	Flags   *Flags            `json:"flags,omitempty"`
	// Config is the effective KubeletConfiguration (defaults, file, flags
	// over file) as kubelet.config.k8s.io/v1beta1.
	Config *kubeletconfigv1beta1.KubeletConfiguration `json:"config,omitempty"`
	// Help and Version are set when the command line only asks for them.
	Help    bool `json:"help,omitempty"`
	Version bool `json:"version,omitempty"`
}

// Flags are the options.KubeletFlags fields a node's identity and files
// hang on.
type Flags struct {
	KubeletConfigFile    string            `json:"kubeletConfigFile,omitempty"`
	KubeletConfigDir     string            `json:"kubeletConfigDir,omitempty"`
	KubeConfig           string            `json:"kubeconfig,omitempty"`
	BootstrapKubeconfig  string            `json:"bootstrapKubeconfig,omitempty"`
	HostnameOverride     string            `json:"hostnameOverride,omitempty"`
	NodeIP               string            `json:"nodeIP,omitempty"`
	NodeLabels           map[string]string `json:"nodeLabels,omitempty"`
	CertDirectory        string            `json:"certDirectory,omitempty"`
	RootDirectory        string            `json:"rootDirectory,omitempty"`
	CloudProvider        string            `json:"cloudProvider,omitempty"`
	WindowsService       bool              `json:"windowsService,omitempty"`
	WindowsPriorityClass string            `json:"windowsPriorityClass,omitempty"`
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--list-flags" {
		listFlags()
		return
	}
	var req Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "kubeletcheck: reading the request: %v\n", err)
		os.Exit(2)
	}
	res := judge(req)
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintf(os.Stderr, "kubeletcheck: %v\n", err)
		os.Exit(2)
	}
}

// listFlags prints the Windows kubelet's flags, one "name\ttype\tdeprecated"
// a line, for tests that compare against recorded knowledge.
func listFlags() {
	fs, _, _, _ := newFlagSet(io.Discard)
	var lines []string
	fs.VisitAll(func(f *pflag.Flag) {
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s", f.Name, f.Value.Type(), f.Deprecated))
	})
	sort.Strings(lines)
	// The flag list is this program's answer on stdout (-list-flags).
	fmt.Fprintln(os.Stdout, strings.Join(lines, "\n"))
}

// newFlagSet is NewKubeletCommand's cleanFlagSet as a Windows build has it.
func newFlagSet(out io.Writer) (*pflag.FlagSet, *options.KubeletFlags, *kubeletconfiginternal.KubeletConfiguration, error) {
	linux := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	linux.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	kubeletFlags := options.NewKubeletFlags()
	kubeletConfig, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, nil, nil, err
	}
	kubeletFlags.AddFlags(linux)
	options.AddKubeletConfigFlags(linux, kubeletConfig)
	options.AddGlobalFlags(linux)
	linux.BoolP("help", "h", false, "help for kubelet")
	fs := windowsFlagSet(linux, kubeletFlags)
	fs.SetOutput(out)
	return fs, kubeletFlags, kubeletConfig, nil
}

func judge(req Request) (res Result) {
	var out strings.Builder
	defer func() {
		for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
			if l != "" {
				res.Output = append(res.Output, l)
			}
		}
	}()
	fail := func(err error) Result {
		res.Error = err.Error()
		return res
	}
	fs, kubeletFlags, kubeletConfig, err := newFlagSet(&out)
	if err != nil {
		return fail(err)
	}
	args := req.Args
	if err := fs.Parse(args); err != nil {
		return fail(fmt.Errorf("failed to parse kubelet flag: %w", err))
	}
	if cmds := fs.Args(); len(cmds) > 0 {
		return fail(fmt.Errorf("unknown command %+s", cmds[0]))
	}
	res.Changed = map[string]string{}
	fs.Visit(func(f *pflag.Flag) { res.Changed[f.Name] = f.Value.String() })
	if help, _ := fs.GetBool("help"); help {
		res.Help = true
		return res
	}
	if v := fs.Lookup("version"); v != nil && v.Changed && v.Value.String() != "false" {
		res.Version = true
		return res
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kubeletConfig.FeatureGates); err != nil {
		return fail(fmt.Errorf("failed to set feature gates from initial flags-based config: %w", err))
	}
	if err := options.ValidateKubeletFlags(kubeletFlags); err != nil {
		return fail(fmt.Errorf("failed to validate kubelet flags: %w", err))
	}
	if len(kubeletFlags.KubeletConfigFile) > 0 {
		name := kubeletFlags.KubeletConfigFile
		content, ok := req.Files[name]
		if !ok {
			return Result{MissingFile: name}
		}
		kubeletConfig, err = loadConfigFile(name, content, &out)
		if err != nil {
			return fail(fmt.Errorf("failed to load kubelet config file, path: %s, error: %w", name, err))
		}
	}
	if len(kubeletFlags.KubeletDropinConfigDirectory) > 0 {
		// mergeKubeletConfigurations walks a directory; the simulator's
		// request carries files, not directories, so it refuses rather
		// than pretend.
		return fail(fmt.Errorf("kubeletcheck: --config-dir is not modelled by the simulator"))
	}
	if len(kubeletFlags.KubeletConfigFile) > 0 {
		if err := kubeletConfigFlagPrecedence(kubeletConfig, args); err != nil {
			return fail(fmt.Errorf("failed to precedence kubeletConfigFlag: %w", err))
		}
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kubeletConfig.FeatureGates); err != nil {
			return fail(fmt.Errorf("failed to set feature gates from initial flags-based config: %w", err))
		}
	}
	if err := validateKubeletConfiguration(kubeletConfig, &out); err != nil {
		return fail(fmt.Errorf("failed to validate kubelet configuration, error: %w, path: %s", err, kubeletConfig))
	}
	res.Flags = &Flags{
		KubeletConfigFile: kubeletFlags.KubeletConfigFile, KubeletConfigDir: kubeletFlags.KubeletDropinConfigDirectory,
		KubeConfig: kubeletFlags.KubeConfig, BootstrapKubeconfig: kubeletFlags.BootstrapKubeconfig,
		HostnameOverride: kubeletFlags.HostnameOverride, NodeIP: kubeletFlags.NodeIP, NodeLabels: kubeletFlags.NodeLabels,
		CertDirectory: kubeletFlags.CertDirectory, RootDirectory: kubeletFlags.RootDirectory,
		CloudProvider: kubeletFlags.CloudProvider, WindowsService: kubeletFlags.WindowsService,
		WindowsPriorityClass: kubeletFlags.WindowsPriorityClass,
	}
	scheme, _, err := kubeletscheme.NewSchemeAndCodecs()
	if err != nil {
		return fail(err)
	}
	versioned := &kubeletconfigv1beta1.KubeletConfiguration{}
	if err := scheme.Convert(kubeletConfig, versioned, nil); err != nil {
		return fail(err)
	}
	versioned.APIVersion, versioned.Kind = kubeletconfigv1beta1.SchemeGroupVersion.String(), "KubeletConfiguration"
	res.Config = versioned
	return res
}

// kubeletConfigFlagPrecedence is cmd/kubelet/app/server.go's (unexported
// there): the command line is parsed again over the loaded file, so flags
// win, with feature gates merged.
func kubeletConfigFlagPrecedence(kc *kubeletconfiginternal.KubeletConfiguration, args []string) error {
	global := pflag.NewFlagSet("", pflag.ContinueOnError)
	global.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	options.AddGlobalFlags(global)
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.SetNormalizeFunc(global.GetNormalizeFunc())
	global.VisitAll(func(f *pflag.Flag) { fs.VarP(cliflag.NoOp{}, f.Name, f.Shorthand, f.Usage) })
	throwaway := options.NewKubeletFlags()
	throwaway.AddFlags(fs)
	addWindowsOSFlags(fs, throwaway)
	options.AddKubeletConfigFlags(fs, kc)
	original := kc.FeatureGates
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return err
	}
	for k, v := range original {
		if _, ok := kc.FeatureGates[k]; !ok {
			kc.FeatureGates[k] = v
		}
	}
	return nil
}

// loadConfigFile is cmd/kubelet/app/server.go's loadConfigFile with the
// host's file: configfiles.NewFsLoader over a filesystem holding it.
func loadConfigFile(name string, content *string, out io.Writer) (*kubeletconfiginternal.KubeletConfiguration, error) {
	const errFmt = "failed to load Kubelet config file %s, error %v"
	// filepath.Abs on Windows leaves C:\... as is; a relative --config is
	// relative to the service's working directory, which the request does
	// not know, so the name is used as given.
	loader, err := configfiles.NewFsLoader(&hostFile{name: name, content: content}, name)
	if err != nil {
		return nil, fmt.Errorf(errFmt, name, err)
	}
	kc, err := loader.Load(withLenientNotice(context.Background(), out))
	if err != nil {
		return nil, fmt.Errorf(errFmt, name, err)
	}
	fixWindowsRelativePaths(kc, name)
	if kc.EvictionHard == nil {
		kc.EvictionHard = copyMap(windowsDefaultEvictionHard)
	} else if kc.MergeDefaultEvictionSettings {
		for k, v := range windowsDefaultEvictionHard {
			if _, exists := kc.EvictionHard[k]; !exists {
				kc.EvictionHard[k] = v
			}
		}
	}
	return kc, nil
}

func copyMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// hostFile is a utilfs.Filesystem whose only file is the one the request
// carries; reading a missing one fails as os.ReadFile does on Windows.
type hostFile struct {
	utilfs.DefaultFs
	name    string
	content *string
}

func (h *hostFile) ReadFile(name string) ([]byte, error) {
	if name != h.name || h.content == nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: errors.New("The system cannot find the file specified.")}
	}
	return []byte(*h.content), nil
}
