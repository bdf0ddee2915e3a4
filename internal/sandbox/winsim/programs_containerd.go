package winsim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// containerd.exe, as containerd's Windows build behaves (containerd/containerd
// cmd/containerd/command/service_windows.go, main.go, and
// cmd/containerd/server/config/config.go of v1.7 and v2.2):
//
//   - --register-service [flags] creates the service "containerd" (or
//     --service-name) with mgr.CreateService: display name "Containerd",
//     description "Container runtime", SERVICE_AUTO_START, the command line
//     "<containerd.exe>" --run-service followed by every other flag given,
//     and recovery actions restart/15s, restart/15s, none with a 24h reset;
//     then it exits 0. --unregister-service deletes it.
//   - --run-service runs the daemon under the SCM (svc.Run reports
//     Running). Output goes to --log-file when given, else nowhere.
//   - without --run-service it is a console daemon: it never talks to the
//     SCM (a service started that way fails with 1053).
//
// The configuration (--config, default %ProgramFiles%\containerd\config.toml;
// a missing default file means the built-in defaults) is read as containerd
// does: 1.7 reads versions 1 (deprecated, converted) and 2 and refuses 3
// ("unsupported config version `3`"); 2.x reads 1 and 2 by migrating them
// to 3 and refuses anything above 3 ("expected containerd config version
// equal to or less than `3`, got `N`"). The CRI settings the simulation
// uses are the sandbox (pause) image and the CNI directories; in a version
// 3 file the v2 section [plugins."io.containerd.grpc.v1.cri"] is not
// migrated and its sandbox_image and cni keys are ignored with containerd's
// "Ignoring unknown key in TOML for plugin" warning, as in containerd 2.x.
func init() { registerProgram("containerd", SubsystemConsole, runContainerd) }

// ContainerdConfig is what a running containerd took from its configuration.
type ContainerdConfig struct {
	Version      string   // the executable's version, "v2.2.0"
	ConfigPath   string   // the file read ("" when the defaults were used)
	ConfigFormat int      // the file's version = N (after defaulting 0 to 1)
	SandboxImage string   // the pause image
	CNIBinDirs   []string // where CNI plugins are looked up
	CNIConfDir   string   // where CNI configurations are read
	Warnings     []string // what containerd logged about the file
}

var containerdConfigs sync.Map // *Host -> ContainerdConfig

// ContainerdConfig returns the configuration of the containerd running on
// the host; ok is false when none runs.
func (h *Host) ContainerdConfig() (ContainerdConfig, bool) {
	v, ok := containerdConfigs.Load(h)
	if !ok {
		return ContainerdConfig{}, false
	}
	return v.(ContainerdConfig), true
}

// containerdFlags are the global flags of containerd's CLI (urfave/cli): the
// ones taking a value, and the service flags.
var containerdValueFlags = map[string]bool{
	"config": true, "c": true, "log-level": true, "l": true, "address": true, "a": true,
	"root": true, "state": true, "service-name": true, "log-file": true,
}

func runContainerd(ctx context.Context, p *Process) int {
	opts := map[string]string{}
	var bools []string
	for i := 0; i < len(p.Args); i++ {
		a := p.Args[i]
		if !strings.HasPrefix(a, "-") {
			if a == "config" || a == "oci-hook" || a == "publish" || a == "help" {
				fmt.Fprintf(p.Stderr, "winsim: containerd %s is not modelled\r\n", a)
				return 1
			}
			fmt.Fprintf(p.Stderr, "containerd: no such command %q\r\n", a)
			return 1
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, val, hasVal = name[:j], name[j+1:], true
		}
		switch {
		case containerdValueFlags[name]:
			if !hasVal {
				if i+1 >= len(p.Args) {
					fmt.Fprintf(p.Stderr, "containerd: flag needs an argument: -%s\r\n", name)
					return 1
				}
				i++
				val = p.Args[i]
			}
			opts[name] = val
		case name == "register-service" || name == "unregister-service" || name == "run-service" || name == "version" || name == "v":
			bools = append(bools, name)
		default:
			fmt.Fprintf(p.Stderr, "containerd: flag provided but not defined: -%s\r\n", name)
			return 1
		}
	}
	has := func(n string) bool {
		for _, b := range bools {
			if b == n {
				return true
			}
		}
		return false
	}
	svcName := opts["service-name"]
	if svcName == "" {
		svcName = "containerd"
	}
	switch {
	case has("version") || has("v"):
		fmt.Fprintf(p.Stdout, "containerd github.com/containerd/containerd/v2 %s\r\n", p.Version)
		return 0
	case has("register-service") && has("unregister-service"):
		fmt.Fprintf(p.Stderr, "containerd: --register-service and --unregister-service cannot be used together: invalid argument\r\n")
		return 1
	case has("unregister-service"):
		if err := p.Host.svcs.remove(svcName); err != nil {
			fmt.Fprintf(p.Stderr, "containerd: %s\r\n", scMessage(err))
			return 1
		}
		return 0
	case has("register-service"):
		return registerContainerd(p, svcName)
	}
	cfg, err := loadContainerdConfig(p, opts["config"])
	logTo := p.Stderr
	if has("run-service") && opts["log-file"] != "" {
		f, ferr := p.Host.fs.OpenWrite(opts["log-file"], true)
		if ferr != nil {
			return 1
		}
		defer func() { _ = f.Close() }() // a lost log line has no one to report to
		logTo = f
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(logTo, "time=%q level=warning msg=%q\r\n", "", w)
	}
	if err != nil {
		fmt.Fprintf(logTo, "containerd: %v\r\n", err)
		return 1
	}
	containerdConfigs.Store(p.Host, cfg)
	defer containerdConfigs.Delete(p.Host)
	fmt.Fprintf(logTo, "time=%q level=info msg=\"containerd successfully booted\"\r\n", "")
	if has("run-service") && p.Service != "" {
		p.ServiceRunning()
	}
	<-ctx.Done()
	return 0
}

// registerContainerd is registerService: the service runs this executable
// with --run-service and the other flags given.
func registerContainerd(p *Process, name string) int {
	args := []string{"--run-service"}
	for _, a := range p.Args {
		if a != "--register-service" && a != "--unregister-service" {
			args = append(args, a)
		}
	}
	err := p.Host.svcs.create(Service{Name: name, DisplayName: "Containerd", Description: "Container runtime",
		BinaryPathName: windowsCommandLine(append([]string{p.Path}, args...)), StartupType: StartupAutomatic})
	if err != nil {
		fmt.Fprintf(p.Stderr, "containerd: %s\r\n", scMessage(err))
		return 1
	}
	if err := p.Host.setFailureActions(name, failureActions{ResetSeconds: 24 * 3600, Actions: []scAction{
		{Type: scActionRestart, Delay: 15e9}, {Type: scActionRestart, Delay: 15e9}, {Type: scActionNone},
	}}); err != nil {
		fmt.Fprintf(p.Stderr, "containerd: %v\r\n", err)
		return 1
	}
	return 0
}

// scMessage is a service error as a Win32 API caller prints it.
func scMessage(err error) string {
	if se := (*ServiceError)(nil); errors.As(err, &se) && se.Err != nil {
		return se.Err.Message
	}
	return err.Error()
}

// containerdMajor reads the major version of "v2.2.0" / "1.7.24".
func containerdMajor(v string) int {
	n, _ := containerdMajorMinor(v)
	return n
}

// containerdMajorMinor reads the major and minor version of "v2.2.0" / "1.7.24".
func containerdMajorMinor(v string) (major, minor int) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	major, _ = strconv.Atoi(parts[0])
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	return major, minor
}

// defaultSandboxImage is the pause image a containerd uses when its
// configuration names none: containerd 1.7's pkg/cri/config default, and
// DefaultSandboxImage of internal/cri/config/config.go in 2.x, read at the
// tags v2.0.0 to v2.1.5 (3.10), v2.2.0 to v2.2.7 (3.10.1) and v2.3.0 to
// v2.3.4 (3.10.2: containerd 05d3b315, "pause image 3.10.1 -> 3.10.2 for
// add Windows Server 2025 (ltsc2025) support"). A release outside those
// (1.6 and older, 2.4 and newer) was not read, so its default is refused as
// not modelled rather than guessed.
func defaultSandboxImage(version string) (string, error) {
	switch major, minor := containerdMajorMinor(version); {
	case major == 1 && minor == 7:
		return "registry.k8s.io/pause:3.8", nil
	case major == 2 && minor < 2:
		return "registry.k8s.io/pause:3.10", nil
	case major == 2 && minor == 2:
		return "registry.k8s.io/pause:3.10.1", nil
	case major == 2 && minor == 3:
		return "registry.k8s.io/pause:3.10.2", nil
	}
	return "", fmt.Errorf("winsim: containerd %s is not modelled: its defaults were read at v1.7 and v2.0 to v2.3 only", version)
}

func loadContainerdConfig(p *Process, path string) (ContainerdConfig, error) {
	major := containerdMajor(p.Version)
	sandboxImage, err := defaultSandboxImage(p.Version)
	if err != nil {
		return ContainerdConfig{}, err
	}
	cfg := ContainerdConfig{Version: p.Version, SandboxImage: sandboxImage,
		CNIBinDirs: []string{`C:\Program Files\containerd\cni\bin`}, CNIConfDir: `C:\Program Files\containerd\cni\conf`}
	explicit := path != ""
	if !explicit {
		path = `C:\Program Files\containerd\config.toml`
	}
	data, err := p.Host.fs.ReadFile(path)
	if err != nil {
		if explicit {
			return cfg, fmt.Errorf("failed to load TOML: %s: open %s: The system cannot find the file specified.", path, path)
		}
		return cfg, nil // containerd ignores a missing default config file
	}
	cfg.ConfigPath = path
	if data, err = parseContainerdTOML(major, path, data); err != nil {
		return cfg, err
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return cfg, fmt.Errorf("failed to load TOML from %s: %v", path, err)
	}
	version := 0
	if v, ok := raw["version"].(int64); ok {
		version = int(v)
	}
	if version == 0 {
		version = 1 // "Version 0 is not defined, treated at version 1"
	}
	cfg.ConfigFormat = version
	plugins, _ := raw["plugins"].(map[string]any)
	if version == 1 {
		// v1Migrate: short plugin names become URIs ("cri" -> io.containerd.grpc.v1.cri).
		migrated := map[string]any{}
		for k, v := range plugins {
			if !strings.Contains(k, ".") {
				k = "io.containerd.grpc.v1." + k
			}
			migrated[k] = v
		}
		plugins = migrated
	}
	section := func(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	cni := func(c map[string]any) {
		if c == nil {
			return
		}
		if d := str(c, "bin_dir"); d != "" {
			cfg.CNIBinDirs = []string{d}
		}
		if ds, ok := c["bin_dirs"].([]any); ok {
			cfg.CNIBinDirs = nil
			for _, d := range ds {
				if s, ok := d.(string); ok {
					cfg.CNIBinDirs = append(cfg.CNIBinDirs, s)
				}
			}
		}
		if d := str(c, "conf_dir"); d != "" {
			cfg.CNIConfDir = d
		}
	}
	if major < 2 {
		switch {
		case version > 2:
			return cfg, fmt.Errorf("failed to load TOML from %s: unsupported config version `%d`", path, version)
		case version < 2:
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("containerd config version `%d` has been deprecated and will be converted on each startup in containerd v2.0, use `containerd config migrate` after upgrading to containerd 2.0 to avoid conversion on startup", version))
		}
		cri := section(plugins, "io.containerd.grpc.v1.cri")
		if s := str(cri, "sandbox_image"); s != "" {
			cfg.SandboxImage = s
		}
		cni(section(cri, "cni"))
		return cfg, nil
	}
	if version > 3 {
		return cfg, fmt.Errorf("failed to load TOML from %s: expected containerd config version equal to or less than `3`, got `%d`", path, version)
	}
	cri := section(plugins, "io.containerd.grpc.v1.cri")
	if version < 3 {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("Configuration migrated from version %d, use `containerd config migrate` to avoid migration", version))
		// plugins/cri/images and plugins/cri/runtime configMigration.
		if s := str(cri, "sandbox_image"); s != "" {
			cfg.SandboxImage = s
		}
		cni(section(cri, "cni"))
		return cfg, nil
	}
	var unknown []string
	for _, k := range []string{"sandbox_image", "cni", "containerd", "registry"} {
		if _, ok := cri[k]; ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("Ignoring unknown key in TOML for plugin (plugin=io.containerd.grpc.v1.cri key=%s)", k))
	}
	// internal/cri/config/config.go ValidateImageConfig: registry.configs
	// (the credentials hosts.toml has no place for) is deprecated.
	if c, ok := section(section(plugins, "io.containerd.cri.v1.images"), "registry")["configs"].(map[string]any); ok && len(c) > 0 {
		cfg.Warnings = append(cfg.Warnings, "`configs` is deprecated, please use `config_path` instead")
	}
	if s := str(section(section(plugins, "io.containerd.cri.v1.images"), "pinned_images"), "sandbox"); s != "" {
		cfg.SandboxImage = s
	}
	cni(section(section(plugins, "io.containerd.cri.v1.runtime"), "cni"))
	return cfg, nil
}
