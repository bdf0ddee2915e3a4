package kubeletsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// The network readiness of a Windows node is containerd's: the kubelet only
// relays the CRI runtime condition NetworkReady
// (pkg/kubelet/kubelet.go, updateRuntimeUp: "container runtime network not
// ready: %v"), and containerd reports it from go-cni
// (internal/cri/server/status.go: "Network plugin returns error: %v").

// Windows defaults of containerd's CRI plugin when its config file says
// nothing: pkg/cri/config/config_windows.go (1.7) and
// internal/cri/config/config_windows.go (2.x), both
// filepath.Join(os.Getenv("ProgramFiles"), "containerd", "cni", "bin"|"conf").
const (
	defaultCNIBinDir  = `C:\Program Files\containerd\cni\bin`
	defaultCNIConfDir = `C:\Program Files\containerd\cni\conf`
	// defaultContainerdConfig is containerd's --config default on Windows
	// (defaults/defaults_windows.go: DefaultConfigDir\config.toml).
	defaultContainerdConfig = `C:\Program Files\containerd\config.toml`
)

// cniPollInterval is how often the simulated runtime looks at its CNI
// directories again (containerd watches conf_dir with fsnotify; the
// simulator polls its own disk).
var cniPollInterval = time.Second

// errCNINotInitialized is go-cni's ErrCNINotInitialized (errors.go).
var errCNINotInitialized = errors.New("cni plugin not initialized")

// cniSettings are containerd's CNI directories.
type cniSettings struct {
	BinDirs []string
	ConfDir string
}

// containerdConfigPath is the file of containerd's --config (-c)
// argument, the last one given, or its Windows default.
func containerdConfigPath(containerdArgs []string) string {
	path := defaultContainerdConfig
	for i, a := range containerdArgs {
		switch {
		case (a == "--config" || a == "-c") && i+1 < len(containerdArgs):
			path = containerdArgs[i+1]
		case strings.HasPrefix(a, "--config="):
			path = strings.TrimPrefix(a, "--config=")
		}
	}
	return path
}

// containerdCNISettings reads the CNI directories from the containerd
// service's --config file: version 2 (containerd 1.x)
// [plugins."io.containerd.grpc.v1.cri".cni] bin_dir/conf_dir, version 3
// (containerd 2.x) [plugins."io.containerd.cri.v1.runtime".cni]
// bin_dirs/conf_dir (bin_dir still read, deprecated). A missing file means
// the defaults, as containerd starts without one.
func containerdCNISettings(files FileSystem, containerdArgs []string) (cniSettings, error) {
	path := containerdConfigPath(containerdArgs)
	s := cniSettings{BinDirs: []string{defaultCNIBinDir}, ConfDir: defaultCNIConfDir}
	data, err := files.ReadFile(path)
	if err != nil {
		return s, nil
	}
	var doc struct {
		Version int                       `toml:"version"`
		Plugins map[string]toml.Primitive `toml:"plugins"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return s, fmt.Errorf("failed to load TOML: %s: %w", path, err)
	}
	type cniTable struct {
		BinDir  string   `toml:"bin_dir"`
		BinDirs []string `toml:"bin_dirs"`
		ConfDir string   `toml:"conf_dir"`
	}
	var plugin struct {
		CNI *cniTable `toml:"cni"`
	}
	name := "io.containerd.grpc.v1.cri"
	if doc.Version >= 3 {
		name = "io.containerd.cri.v1.runtime"
	}
	if p, ok := doc.Plugins[name]; ok {
		if err := md.PrimitiveDecode(p, &plugin); err != nil {
			return s, fmt.Errorf("failed to load TOML: %s: %w", path, err)
		}
	}
	if c := plugin.CNI; c != nil {
		switch {
		case len(c.BinDirs) > 0:
			s.BinDirs = c.BinDirs
		case c.BinDir != "":
			s.BinDirs = []string{c.BinDir}
		}
		if c.ConfDir != "" {
			s.ConfDir = c.ConfDir
		}
	}
	return s, nil
}

// cniNetwork is the network go-cni loaded: the first file of conf_dir.
type cniNetwork struct {
	File    string
	Name    string
	Plugins []cniPlugin
}

type cniPlugin struct {
	Type     string
	Delegate string // flannel's delegate.type (win-overlay, win-bridge)
	IPAM     string // ipam.type (host-local)
}

// loadCNINetwork is go-cni's loadFromConfDir (opts.go) with max 1 (containerd's
// NetworkPluginMaxConfNum default): the files of conf_dir ending in .conf,
// .conflist or .json (libcni.ConfFiles), sorted, the first one loaded; a
// .conf/.json holding one plugin becomes a list of one (ConfListFromConf).
func loadCNINetwork(files FileSystem, confDir string) (*cniNetwork, error) {
	names, err := readDir(files, confDir)
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no network config found in %s: %w", confDir, errCNINotInitialized)
	}
	var confFiles []string
	for _, n := range names {
		switch strings.ToLower(n[strings.LastIndex(n, ".")+1:]) {
		case "conf", "conflist", "json":
			if strings.Contains(n, ".") {
				confFiles = append(confFiles, n)
			}
		}
	}
	if len(confFiles) == 0 {
		return nil, fmt.Errorf("no network config found in %s: %w", confDir, errCNINotInitialized)
	}
	sort.Strings(confFiles)
	file := joinWin(confDir, confFiles[0])
	data, err := files.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("failed to load CNI config file %s: %w", file, err)
	}
	type pluginJSON struct {
		Type     string `json:"type"`
		Delegate *struct {
			Type string `json:"type"`
		} `json:"delegate"`
		IPAM *struct {
			Type string `json:"type"`
		} `json:"ipam"`
	}
	var doc struct {
		Name    string       `json:"name"`
		Plugins []pluginJSON `json:"plugins"`
		pluginJSON
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("failed to load CNI config file %s: error parsing configuration: %w", file, err)
	}
	net := &cniNetwork{File: file, Name: doc.Name}
	list := doc.Plugins
	if !strings.HasSuffix(strings.ToLower(file), ".conflist") {
		if doc.Type == "" {
			return nil, fmt.Errorf("failed to load CNI config file %s: error parsing configuration: missing 'type'", file)
		}
		list = []pluginJSON{doc.pluginJSON}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("CNI config list in config file %s has no networks, skipping: %w", file, errCNINotInitialized)
	}
	for _, p := range list {
		cp := cniPlugin{Type: p.Type}
		if p.Delegate != nil {
			cp.Delegate = p.Delegate.Type
		}
		if p.IPAM != nil {
			cp.IPAM = p.IPAM.Type
		}
		net.Plugins = append(net.Plugins, cp)
	}
	return net, nil
}

// findPlugin is libcni's invoke.FindInPath on Windows: <type>.exe in one of
// the bin dirs.
func findPlugin(files FileSystem, binDirs []string, typ string) error {
	for _, d := range binDirs {
		if _, err := files.ReadFile(joinWin(d, typ+".exe")); err == nil {
			return nil
		}
	}
	return fmt.Errorf("failed to find plugin %q in path %v", typ, binDirs)
}

// networkStatus is containerd's NetworkReady condition: nil when ready.
// Besides go-cni's loading, every plugin type of the network must exist as
// <type>.exe in a bin dir — what the node's contract asks (libcni invokes
// the plugins' STATUS only for cniVersion 1.1.0 lists; a missing binary of
// an older list surfaces at the first sandbox, where the simulator checks
// the delegate and ipam plugins too: see sandboxNetworkError).
func networkStatus(files FileSystem, s cniSettings) (*cniNetwork, error) {
	net, err := loadCNINetwork(files, s.ConfDir)
	if err != nil {
		return nil, errCNINotInitialized
	}
	for _, p := range net.Plugins {
		if err := findPlugin(files, s.BinDirs, p.Type); err != nil {
			return net, err
		}
	}
	return net, nil
}

// sandboxNetworkError is what RunPodSandbox fails with when the plugins a
// sandbox's network needs (delegates, IPAM) are missing:
// "failed to setup network for sandbox ...: plugin type=..." as containerd
// (internal/cri/server/sandbox_run.go) wraps libcni's error.
func sandboxNetworkError(files FileSystem, s cniSettings, net *cniNetwork) error {
	for _, p := range net.Plugins {
		for _, t := range []string{p.Type, p.Delegate, p.IPAM} {
			if t == "" {
				continue
			}
			if err := findPlugin(files, s.BinDirs, t); err != nil {
				return fmt.Errorf("plugin type=%q name=%q failed (add): %w", p.Type, net.Name, err)
			}
		}
		// Antrea's plugin hands the ADD to the agent's CNI server
		// (antrea-io/antrea pkg/cni, cmd/antrea-cni): without a running
		// agent the call cannot connect.
		if p.Type == "antrea" && !fileExists(files, antreaCNIServerFile) {
			return fmt.Errorf("plugin type=%q name=%q failed (add): rpc error: code = Unavailable desc = connection error: "+
				"the antrea-agent's CNI server is not serving on this node", p.Type, net.Name)
		}
	}
	return nil
}

// dirLister is implemented by file systems that can list a directory
// (memory file systems in tests); a *winsim.Host is read through DiskPath.
type dirLister interface {
	ReadDir(path string) ([]string, error)
}

type diskPather interface {
	DiskPath(path string) string
}

func readDir(files FileSystem, dir string) ([]string, error) {
	if l, ok := files.(dirLister); ok {
		return l.ReadDir(dir)
	}
	d, ok := files.(diskPather)
	if !ok {
		return nil, errors.New("the host's file system cannot list directories")
	}
	entries, err := os.ReadDir(d.DiskPath(dir))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func fileExists(files FileSystem, path string) bool {
	_, err := files.ReadFile(path)
	return err == nil
}
