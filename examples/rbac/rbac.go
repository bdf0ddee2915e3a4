// Package rbac ships the provider's Kubernetes RBAC manifest
// (terraform-provider-windows.yaml: the everyday identity's roles and the
// admission policies that narrow them) to the code that applies it: the
// sandbox issues the provider a ServiceAccount bound by this very file, so
// the documented role and the one the acceptance tests run with are one.
//
// The manifest binds the everyday identity only (windows_golden_image,
// windows_node, windows_node_pool, windows_cluster). What a cluster installs
// once (windows_node_networking, windows_runtime_class,
// windows_linux_daemonset_guard, windows_gmsa_credential_spec) is applied with a cluster administrator's
// identity, through a second provider configuration: no role here grants
// it, as kubeadm applies its add-ons with admin.conf.
package rbac

import _ "embed"

// Manifest is terraform-provider-windows.yaml.
//
//go:embed terraform-provider-windows.yaml
var Manifest []byte

// Names in Manifest.
const (
	Namespace      = "terraform-provider-windows"
	ServiceAccount = "terraform-provider-windows"
	// Group is the group whose members the admission policies hold besides
	// the ServiceAccounts of Namespace: a user the roles are bound to
	// instead (a client certificate's organization, say) must be in it.
	Group = "terraform-provider-windows"
)

// The ValidatingAdmissionPolicies of Manifest (each bound by a
// ValidatingAdmissionPolicyBinding of the same name). PolicyProbe is the
// manifest's last policy and binding: once the API server enforces it, it
// enforces every other one (see the sandbox's wait).
const (
	PolicySecrets        = "terraform-provider-windows-secrets"
	PolicyNodes          = "terraform-provider-windows-nodes"
	PolicyProbeEndpoints = "terraform-provider-windows-probe-endpoints"
	PolicyProbe          = "terraform-provider-windows-probe"
)

// InstallOnceResources are the resources applied with an administrator's
// identity (a provider configuration of their own, by alias): the
// everyday role grants none of their writes.
var InstallOnceResources = []string{"windows_node_networking", "windows_runtime_class", "windows_linux_daemonset_guard", "windows_gmsa_credential_spec"}
