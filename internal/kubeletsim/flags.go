package kubeletsim

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// flags are the kubelet command-line flags the simulator acts on. Every
// other flag of kubelet v1.36 on Windows (kubeletFlagTable) is accepted and
// ignored; anything else fails the way kubelet.exe fails:
// "failed to parse kubelet flag: unknown flag: --network-plugin".
type flags struct {
	set      *pflag.FlagSet
	warnings []string // "Flag --x has been deprecated, ..." as pflag prints them

	Config, ConfigDir        string
	Kubeconfig               string
	BootstrapKubeconfig      string
	CertDir                  string
	HostnameOverride         string
	NodeIP                   string
	NodeLabels               map[string]string
	RootDir                  string
	WindowsService           bool
	ContainerRuntimeEndpoint string
	RegisterWithTaints       []corev1.Taint
	ClusterDNS               []string
	ClusterDomain            string
	MaxPods                  int32
	ProviderID               string
	ResolvConf               string
	RegisterNode             bool
	Verbosity                string
}

// Flags the simulator reads itself; their types and defaults follow
// cmd/kubelet/app/options of v1.36 (defaults as on Windows).
const (
	defaultCertDir          = `C:\var\lib\kubelet\pki`
	defaultRootDir          = `C:\var\lib\kubelet`
	defaultRuntimeEndpoint  = "npipe:////./pipe/containerd-containerd"
	defaultClusterDomainNil = ""
)

// parseFlags parses a kubelet command line.
func parseFlags(args []string) (*flags, error) {
	f := &flags{NodeLabels: map[string]string{}, RegisterNode: true}
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	// cliflag.WordSepNormalizeFunc: --cert_dir is --cert-dir.
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	fs.StringVar(&f.Config, "config", "", "")
	fs.StringVar(&f.ConfigDir, "config-dir", "", "")
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "")
	fs.StringVar(&f.BootstrapKubeconfig, "bootstrap-kubeconfig", "", "")
	fs.StringVar(&f.CertDir, "cert-dir", defaultCertDir, "")
	fs.StringVar(&f.HostnameOverride, "hostname-override", "", "")
	fs.StringVar(&f.NodeIP, "node-ip", "", "")
	fs.Var(mapVar{f.NodeLabels}, "node-labels", "")
	fs.StringVar(&f.RootDir, "root-dir", defaultRootDir, "")
	fs.BoolVar(&f.WindowsService, "windows-service", false, "")
	fs.StringVar(&f.ContainerRuntimeEndpoint, "container-runtime-endpoint", defaultRuntimeEndpoint, "")
	fs.Var(&taintsVar{&f.RegisterWithTaints}, "register-with-taints", "")
	fs.StringSliceVar(&f.ClusterDNS, "cluster-dns", nil, "")
	fs.StringVar(&f.ClusterDomain, "cluster-domain", "", "")
	fs.Int32Var(&f.MaxPods, "max-pods", 110, "")
	fs.StringVar(&f.ProviderID, "provider-id", "", "")
	fs.StringVar(&f.ResolvConf, "resolv-conf", "", "")
	fs.BoolVar(&f.RegisterNode, "register-node", true, "")
	fs.StringVarP(&f.Verbosity, "v", "v", "0", "")
	for _, spec := range kubeletFlagTable {
		if fl := fs.Lookup(spec.name); fl != nil {
			fl.Deprecated = spec.deprecated
			continue
		}
		fl := fs.VarPF(&anyValue{typ: spec.typ}, spec.name, spec.shorthand, "")
		fl.NoOptDefVal = spec.noOptDefVal
		fl.Deprecated = spec.deprecated
	}
	err := fs.Parse(args)
	f.warnings = strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(f.warnings) == 1 && f.warnings[0] == "" {
		f.warnings = nil
	}
	if err != nil {
		return f, fmt.Errorf("failed to parse kubelet flag: %w", err)
	}
	if rest := fs.Args(); len(rest) > 0 {
		return f, fmt.Errorf("unknown command %+s", rest[0])
	}
	f.set = fs
	return f, nil
}

// changed reports whether the command line set a flag.
func (f *flags) changed(name string) bool { return f.set.Changed(name) }

// validate is options.ValidateKubeletFlags plus --node-ip parsing.
func (f *flags) validate() error {
	var unknown []string
	var invalid []string
	for k, v := range f.NodeLabels {
		if isKubernetesLabel(k) && !kubeletapis.IsKubeletLabel(k) {
			unknown = append(unknown, k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", k, strings.Join(errs, ", ")))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", v, strings.Join(errs, ", ")))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
			unknown, strings.Join(kubeletapis.KubeletLabelNamespaces(), ", "), strings.Join(kubeletapis.KubeletLabels(), ", "))
	}
	if len(invalid) > 0 {
		sort.Strings(invalid)
		return fmt.Errorf("failed to validate kubelet flags: invalid node labels: %s", strings.Join(invalid, "; "))
	}
	if f.NodeIP != "" {
		for _, ip := range strings.Split(f.NodeIP, ",") {
			if net.ParseIP(strings.TrimSpace(ip)) == nil {
				return fmt.Errorf("failed to run Kubelet: bad --node-ip %q; must contain either a single IP or a dual-stack pair of IPs", f.NodeIP)
			}
		}
	}
	return nil
}

func isKubernetesLabel(key string) bool {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	return ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
}

// visit lists the flags given, as kubelet logs them at start ("FLAG: --x=y").
func (f *flags) visit(fn func(name, value string)) {
	f.set.Visit(func(fl *pflag.Flag) { fn(fl.Name, fl.Value.String()) })
}

// anyValue accepts the value of a flag the simulator does not act on.
type anyValue struct {
	typ string
	val string
}

func (v *anyValue) String() string { return v.val }
func (v *anyValue) Set(s string) error {
	if v.typ == "bool" && s != "true" && s != "false" && s != "1" && s != "0" && !strings.EqualFold(s, "true") && !strings.EqualFold(s, "false") {
		return fmt.Errorf("strconv.ParseBool: parsing %q: invalid syntax", s)
	}
	v.val = s
	return nil
}
func (v *anyValue) Type() string { return v.typ }

// mapVar is cliflag.ConfigurationMap: "k1=v1,k2=v2", repeatable.
type mapVar struct{ m map[string]string }

func (v mapVar) String() string {
	keys := make([]string, 0, len(v.m))
	for k := range v.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + v.m[k]
	}
	return strings.Join(parts, ",")
}

func (v mapVar) Set(s string) error {
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("malformed pair, expect string=string")
		}
		v.m[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	return nil
}

func (mapVar) Type() string { return "mapStringString" }

// taintsVar is utilflag.RegisterWithTaintsVar: "key=value:Effect,key:Effect".
type taintsVar struct{ taints *[]corev1.Taint }

func (v *taintsVar) String() string {
	parts := make([]string, len(*v.taints))
	for i, t := range *v.taints {
		parts[i] = t.ToString()
	}
	return strings.Join(parts, ",")
}

func (v *taintsVar) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		*v.taints = nil
		return nil
	}
	var taints []corev1.Taint
	for _, spec := range strings.Split(s, ",") {
		t, err := parseTaint(strings.TrimSpace(spec))
		if err != nil {
			return err
		}
		taints = append(taints, t)
	}
	*v.taints = taints
	return nil
}

func (*taintsVar) Type() string { return "[]api.Taint" }

// parseTaint parses "key[=value]:Effect" as k8s.io/kubernetes/pkg/util/taints does.
func parseTaint(st string) (corev1.Taint, error) {
	var t corev1.Taint
	var key, value, effect string
	parts := strings.Split(st, ":")
	switch len(parts) {
	case 1:
		key = parts[0]
	case 2:
		effect = parts[1]
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return t, fmt.Errorf("invalid taint spec: %v", st)
		}
		key = kv[0]
		if len(kv) == 2 {
			value = kv[1]
		}
	default:
		return t, fmt.Errorf("invalid taint spec: %v", st)
	}
	switch corev1.TaintEffect(effect) {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return t, fmt.Errorf("invalid taint spec: %v, unsupported taint effect", st)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
	}
	return corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}, nil
}
