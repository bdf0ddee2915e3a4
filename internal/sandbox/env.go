package sandbox

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/artifacts"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vcsim"
)

// EnvVar is one environment variable.
type EnvVar struct{ Name, Value string }

// Env returns the settings that point the provider, Terraform and tests at
// this sandbox. The names are a contract (cmd/sandbox's env file, acceptance
// tests, examples/quickstart): add to them, never rename.
func (s *Sandbox) Env() []EnvVar {
	vc := s.VSphere
	var env []EnvVar
	if s.Hosts != nil {
		// The simulated Windows hosts: their directories and ports (the
		// Windows ones unless this machine cannot bind them).
		p := s.Hosts.Ports()
		env = []EnvVar{
			{"SANDBOX_HOSTS_DIR", s.Hosts.Dir},
			{"SANDBOX_WINRM_PORT", strconv.Itoa(p.WinRM)},
			{"SANDBOX_WINRM_HTTPS_PORT", strconv.Itoa(p.WinRMHTTPS)},
			{"SANDBOX_SSH_PORT", strconv.Itoa(p.SSH)},
		}
	}
	if a := s.Artifacts; a != nil {
		// The artifact server, for windows_golden_image in tests and the quickstart.
		env = append(env,
			EnvVar{"SANDBOX_ARTIFACTS_URL", a.BaseURL},
			EnvVar{"TF_VAR_kubernetes_version", artifacts.KubernetesVersion},
			EnvVar{"TF_VAR_artifacts_base_url", a.BaseURL},
			EnvVar{"TF_VAR_kubelet_sha256", a.Kubelet.SHA256},
			EnvVar{"TF_VAR_kube_proxy_sha256", a.KubeProxy.SHA256},
			EnvVar{"TF_VAR_kube_log_runner_sha256", a.KubeLogRunner.SHA256},
			EnvVar{"TF_VAR_containerd_url", a.Containerd.URL},
			EnvVar{"TF_VAR_containerd_sha256", a.Containerd.SHA256},
			EnvVar{"TF_VAR_cni_plugins_url", a.CNIPlugins.URL},
			EnvVar{"TF_VAR_cni_plugins_sha256", a.CNIPlugins.SHA256},
			EnvVar{"TF_VAR_flanneld_url", a.Flanneld.URL},
			EnvVar{"TF_VAR_flanneld_sha256", a.Flanneld.SHA256},
			EnvVar{"TF_VAR_flannel_cni_plugin_url", a.FlannelCNIPlugin.URL},
			EnvVar{"TF_VAR_flannel_cni_plugin_sha256", a.FlannelCNIPlugin.SHA256},
			// Every networking mode's downloads, as the HCL value of
			// windows_golden_image's network_artifacts.
			EnvVar{"TF_VAR_network_artifacts", a.NetworkArtifactsHCL()},
		)
		// Each mode's programs one by one, as examples/quickstart takes
		// them: TF_VAR_<mode>_<program>_url and _sha256
		// (TF_VAR_calico_windows_archive_url).
		for _, mode := range sortedKeys(a.Network) {
			for _, name := range sortedKeys(a.Network[mode]) {
				art := a.Network[mode][name]
				env = append(env, EnvVar{"TF_VAR_" + mode + "_" + name + "_url", art.URL}, EnvVar{"TF_VAR_" + mode + "_" + name + "_sha256", art.SHA256})
			}
		}
	}
	if p := s.SiteProxy; p != nil {
		// The site proxy, for a proxy attribute (guests reach the
		// artifact server through it by SANDBOX_OUTSIDE_ARTIFACTS).
		env = append(env, EnvVar{"SANDBOX_SITE_PROXY_URL", p.URL}, EnvVar{"SANDBOX_OUTSIDE_ARTIFACTS", s.OutsideArtifacts()})
	}
	if d := s.Domain; d != nil {
		// The lab's Active Directory domain: the OU for the nodes and the
		// join account delegated on it; its Administrator for the tests'
		// own checks; its controller's LDAP and LDAPS addresses (the
		// LDAPS certificate is from SANDBOX_CA_FILE's CA).
		env = append(env,
			EnvVar{"SANDBOX_AD_DOMAIN", d.Domain()},
			EnvVar{"SANDBOX_AD_OU", ADOU()},
			EnvVar{"SANDBOX_AD_JOIN_USER", d.JoinUser},
			EnvVar{"SANDBOX_AD_JOIN_PASSWORD", d.JoinPassword},
			EnvVar{"SANDBOX_AD_ADMIN_PASSWORD", d.AdminPassword},
			EnvVar{"SANDBOX_AD_LDAP_ADDR", d.Addr()},
			EnvVar{"SANDBOX_AD_LDAPS_ADDR", d.LDAPSAddr()},
		)
	}
	if r := s.Registry; r != nil {
		// The private registry mirror: windows_golden_image's
		// registry_mirrors endpoint and registry_credentials_wo.
		env = append(env,
			EnvVar{"SANDBOX_REGISTRY_MIRROR", "http://" + r.Addr},
			EnvVar{"SANDBOX_REGISTRY_USERNAME", r.Username},
			EnvVar{"TF_VAR_registry_password", r.Password()},
		)
	}
	return append([]EnvVar{
		// The provider.
		{"VSPHERE_SERVER", vc.Server},
		// The provider's vCenter account: only the least-privilege roles.
		{"VSPHERE_USER", vc.ProviderUser},
		{"VSPHERE_PASSWORD", vc.ProviderPassword},
		{"VSPHERE_CA_FILE", s.CAFile},
		// The provider's everyday identity, bound by the documented role
		// (examples/rbac); the admin's is SANDBOX_ADMIN_KUBECONFIG (and
		// TF_VAR_admin_kubeconfig, the quickstart's provider alias for
		// what a cluster installs once).
		{"KUBECONFIG", s.ProviderKubeconfig},
		// The inventory, for tests and users.
		{"SANDBOX_DIR", s.Dir},
		{"SANDBOX_CA_FILE", s.CAFile},
		{"SANDBOX_ADMIN_KUBECONFIG", s.Kubeconfig},
		// vCenter's administrator, for the tests' own setup and checks
		// (a VM outside the provider's folders, a fault), as the admin
		// kubeconfig is for the cluster's.
		{"SANDBOX_VSPHERE_ADMIN_USER", vc.User},
		{"SANDBOX_VSPHERE_ADMIN_PASSWORD", vc.Password},
		{"SANDBOX_TEMPLATE_2019", vc.Templates["2019"]},
		{"SANDBOX_TEMPLATE_2022", vc.Templates["2022"]},
		{"SANDBOX_TEMPLATE_2025", vc.Templates["2025"]},
		// A template prepared for the network transports: a WinRM HTTPS
		// listener with one certificate for its name (WIN2022-PREP),
		// shared by every clone, and OpenSSH Server.
		{"SANDBOX_TEMPLATE_2022_PREPARED", vc.Templates[vcsim.PreparedVersion]},
		{"SANDBOX_TEMPLATE_2022_PREPARED_NAME", strings.ToUpper(path.Base(vc.Templates[vcsim.PreparedVersion]))},
		{"SANDBOX_ADMIN_PASSWORD", s.AdminPassword},
		{"SANDBOX_RESOURCE_POOL_ID", vc.ResourcePoolID},
		{"SANDBOX_DATASTORE_ID", vc.DatastoreID},
		{"SANDBOX_NETWORK_ID", vc.NetworkID},
		{"SANDBOX_FOLDER", vc.Folder},
		// A datacenter's objects (vcsim/site.go), for datastore_cluster_id,
		// storage_policy_id, tags and custom_attributes.
		{"SANDBOX_DATASTORE_CLUSTER_ID", vc.Site.DatastoreClusterID},
		{"SANDBOX_STORAGE_POLICY_ID", vcsim.StoragePolicyID},
		{"SANDBOX_TAG_IDS", strings.Join(vc.Site.TagIDs, ",")},
		{"SANDBOX_CUSTOM_ATTRIBUTE_ID", vc.Site.CustomAttributeKey},
		// examples/quickstart's variables; Terraform ignores undeclared ones.
		{"TF_VAR_resource_pool_id", vc.ResourcePoolID},
		{"TF_VAR_datastore_id", vc.DatastoreID},
		{"TF_VAR_network_id", vc.NetworkID},
		{"TF_VAR_folder", vc.Folder},
		{"TF_VAR_golden_image_folder", vc.GoldenFolder},
		{"TF_VAR_source_template_2019", vc.Templates["2019"]},
		{"TF_VAR_source_template_2022", vc.Templates["2022"]},
		{"TF_VAR_source_template_2025", vc.Templates["2025"]},
		{"TF_VAR_admin_password", s.AdminPassword},
		{"TF_VAR_admin_kubeconfig", s.Kubeconfig},
	}, env...)
}

// Environ returns Env as NAME=value strings, for exec.Cmd.Env or os.Setenv.
func (s *Sandbox) Environ() []string {
	env := s.Env()
	out := make([]string, len(env))
	for i, e := range env {
		out[i] = e.Name + "=" + e.Value
	}
	return out
}

// WriteEnvFile writes Env as `export NAME='value'` lines for `source`. The
// file is created 0600 (it holds passwords) and renamed into place, so a
// script waiting for it never reads half of it.
func (s *Sandbox) WriteEnvFile(path string) error {
	var b strings.Builder
	b.WriteString("# terraform-provider-windows sandbox; valid while `go run ./cmd/sandbox` runs.\n")
	for _, e := range s.Env() {
		fmt.Fprintf(&b, "export %s=%s\n", e.Name, shellQuote(e.Value))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sandbox-env-*")
	if err != nil {
		return fmt.Errorf("writing env file: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // after a successful rename there is nothing left to remove
	if _, err := tmp.WriteString(b.String()); err != nil {
		_ = tmp.Close() // the write's error is the one to report
		return fmt.Errorf("writing env file %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing env file %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing env file: %w", err)
	}
	return nil
}

// shellQuote quotes v for POSIX shells: in single quotes, where an embedded
// single quote ends the quoted part, appears escaped (\') and reopens it.
func shellQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// Setenv sets Env in this process's environment, for test packages whose
// TestMain starts the sandbox and then runs the provider in-process.
func (s *Sandbox) Setenv() error {
	for _, e := range s.Env() {
		if err := os.Setenv(e.Name, e.Value); err != nil {
			return fmt.Errorf("setting %s: %w", e.Name, err)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
