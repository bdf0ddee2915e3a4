package main

// The hand-kept Windows knowledge: where the kubelet's code is chosen by
// build tags, this Linux-built helper would apply Linux rules. Each item
// names the upstream file (k8s.io/kubernetes v1.36.3) it mirrors.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfiginternal "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
)

// linuxOnlyFlags are registered by cmd/kubelet/app/options/globalflags_linux.go
// (addCadvisorFlags: cadvisor's global flags re-registered, mostly
// deprecated); globalflags_other.go's addCadvisorFlags, which Windows builds
// use, registers none, so kubelet.exe rejects them as unknown flags.
var linuxOnlyFlags = sets.New(
	"housekeeping-interval",
	"application-metrics-count-limit", "boot-id-file", "container-hints", "containerd",
	"enable-load-reader", "event-storage-age-limit", "event-storage-event-limit",
	"global-housekeeping-interval", "log-cadvisor-usage", "machine-id-file",
	"storage-driver-user", "storage-driver-password", "storage-driver-host", "storage-driver-db",
	"storage-driver-table", "storage-driver-secure", "storage-driver-buffer-duration",
	"containerd-namespace",
)

// windowsFlagSet is the Windows kubelet's flag set built from the Linux one:
// without linuxOnlyFlags, with addWindowsOSFlags.
func windowsFlagSet(linux *pflag.FlagSet, f *options.KubeletFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(linux.GetNormalizeFunc())
	linux.VisitAll(func(fl *pflag.Flag) {
		if !linuxOnlyFlags.Has(fl.Name) {
			fs.AddFlag(fl)
		}
	})
	addWindowsOSFlags(fs, f)
	return fs
}

// addWindowsOSFlags is cmd/kubelet/app/options/osflags_windows.go
// (KubeletFlags.addOSFlags, lines 25-32): the flags only Windows builds
// register. options.KubeletFlags has the fields on every OS.
func addWindowsOSFlags(fs *pflag.FlagSet, f *options.KubeletFlags) {
	fs.BoolVar(&f.WindowsService, "windows-service", f.WindowsService, "Enable Windows Service Control Manager API integration")
	fs.StringVar(&f.WindowsPriorityClass, "windows-priorityclass", "NORMAL_PRIORITY_CLASS",
		"Set the PriorityClass associated with kubelet process, the default ones are available at "+
			"https://docs.microsoft.com/en-us/windows/win32/procthread/scheduling-priorities")
}

// windowsDefaultEvictionHard is pkg/kubelet/eviction/defaults_windows.go's
// DefaultEvictionHard, which cmd/kubelet/app/server.go's loadConfigFile
// applies when the file sets no evictionHard (defaults_linux.go differs:
// 100Mi and inode thresholds).
var windowsDefaultEvictionHard = map[string]string{
	"memory.available":  "500Mi",
	"nodefs.available":  "10%",
	"imagefs.available": "15%",
}

// Errors of pkg/kubelet/apis/config/validation/validation_linux.go's
// validateKubeletOSConfiguration (lines 33-55), which this Linux build runs
// and a Windows build does not: on a cgroup v1 sandbox machine the first
// fails every default configuration (failCgroupV1 defaults to true).
var linuxOSValidationErrors = []string{
	"kubelet is configured to not run on a host using cgroup v1.",
	"invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1",
	"invalid configuration: userNamespaces.idsPerPod must ",
}

// validateKubeletConfiguration is validation.ValidateKubeletConfiguration
// with the Windows OS rules in place of the Linux ones.
func validateKubeletConfiguration(kc *kubeletconfiginternal.KubeletConfiguration, out io.Writer) error {
	err := kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate)
	var agg utilerrors.Aggregate
	if err != nil && !errors.As(err, &agg) {
		return err // feature gates: returned before any other check
	}
	var errs []error
	if agg != nil {
		for _, e := range agg.Errors() {
			if isLinuxOnlyValidationError(e, kc) {
				continue
			}
			errs = append(errs, e)
		}
	}
	if e := validateWindowsOSConfiguration(kc, out); e != nil {
		errs = append(errs, e)
	}
	// validation.go (end): pod logs path must be absolute by
	// utilfs.IsAbs, which on Windows (pkg/util/filesystem/util_windows.go,
	// IsAbs) also accepts C:\... and \... paths.
	if !windowsIsAbs(kc.PodLogsDir) {
		errs = append(errs, fmt.Errorf("invalid configuration: pod logs path %q must be absolute path", kc.PodLogsDir))
	}
	return utilerrors.NewAggregate(errs)
}

func isLinuxOnlyValidationError(e error, kc *kubeletconfiginternal.KubeletConfiguration) bool {
	msg := e.Error()
	for _, l := range linuxOSValidationErrors {
		if strings.HasPrefix(msg, l) {
			return true
		}
	}
	// The Linux IsAbs check; the Windows one is re-done above.
	return msg == fmt.Sprintf("invalid configuration: pod logs path %q must be absolute path", kc.PodLogsDir)
}

// validateWindowsOSConfiguration is
// pkg/kubelet/apis/config/validation/validation_windows.go (lines 31-54):
// cgroupsPerQOS and enforceNodeAllocatable are ignored with a warning;
// singleProcessOOMKill and userNamespaces are refused.
func validateWindowsOSConfiguration(kc *kubeletconfiginternal.KubeletConfiguration, out io.Writer) error {
	const message = "ignored configuration option: %v (%v) %v is not supported on Windows"
	if kc.CgroupsPerQOS {
		klogWarning(out, "validation_windows.go:37", fmt.Sprintf(message, "CgroupsPerQOS", "--cgroups-per-qos", kc.CgroupsPerQOS))
	}
	if kc.SingleProcessOOMKill != nil {
		return fmt.Errorf("invalid configuration: singleProcessOOMKill is not supported on Windows")
	}
	withoutNone := sets.New(kc.EnforceNodeAllocatable...).Delete("none")
	if len(withoutNone) > 0 {
		klogWarning(out, "validation_windows.go:46", fmt.Sprintf(message, "EnforceNodeAllocatable", "--enforce-node-allocatable", kc.EnforceNodeAllocatable))
	}
	if kc.UserNamespaces != nil {
		return fmt.Errorf("invalid configuration: userNamespaces is not supported on Windows")
	}
	return nil
}

// windowsIsAbs is pkg/util/filesystem/util_windows.go's IsAbs.
func windowsIsAbs(p string) bool {
	if len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') {
		return true
	}
	return strings.HasPrefix(p, `\`) || strings.HasPrefix(p, `/`)
}

// fixWindowsRelativePaths redoes configfiles' resolveRelativePaths with
// Windows paths: the Linux build saw C:\k\config.yaml as a relative name in
// the directory "." and left relative paths as they were; Windows resolves
// them against the config file's directory.
func fixWindowsRelativePaths(kc *kubeletconfiginternal.KubeletConfiguration, configFile string) {
	dir := configFile
	if i := strings.LastIndexAny(dir, `\/`); i >= 0 {
		dir = dir[:i]
	} else {
		dir = "."
	}
	for _, p := range kubeletconfiginternal.KubeletConfigurationPathRefs(kc) {
		if *p == "" || windowsIsAbs(*p) {
			continue
		}
		*p = dir + `\` + strings.ReplaceAll(*p, "/", `\`)
	}
}

// withLenientNotice gives the config decoder a klog text logger writing to
// out, so "Using lenient decoding as strict decoding failed" reaches the
// simulator's log as the kubelet writes it.
func withLenientNotice(ctx context.Context, out io.Writer) context.Context {
	return klog.NewContext(ctx, textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(out))))
}

// klogWarning writes a line as klog.Warningf does (klog's text header).
func klogWarning(out io.Writer, file, msg string) {
	now := time.Now()
	fmt.Fprintf(out, "W%02d%02d %s %7d %s] %s\n", now.Month(), now.Day(), now.Format("15:04:05.000000"), os.Getpid(), file, msg)
}
