// Package rbac ships the provider's Kubernetes RBAC manifest
// (terraform-provider-windows.yaml: its roles and the admission policies that
// narrow them) to the code that applies it: the sandbox issues the provider a
// ServiceAccount bound by this very file, so the documented role and the one
// the acceptance tests run with are one.
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
	// NetworkingNamespace is the namespace the documents labelled
	// app.kubernetes.io/component=networking grant windows_node_networking.
	NetworkingNamespace = "kube-system"
	ComponentLabel      = "app.kubernetes.io/component"
	NetworkingComponent = "networking"
	// Group is the group whose members the admission policies hold besides
	// the ServiceAccounts of Namespace: a user the roles are bound to
	// instead (a client certificate's organization, say) must be in it.
	Group = "terraform-provider-windows"
)

// The ValidatingAdmissionPolicies of Manifest (each bound by a
// ValidatingAdmissionPolicyBinding of the same name). PolicyRuntimeClasses
// is the manifest's last policy and binding: once the API server enforces
// it, it enforces every other one (see the sandbox's wait).
const (
	PolicySecrets        = "terraform-provider-windows-secrets"
	PolicyDaemonSets     = "terraform-provider-windows-daemonsets"
	PolicyNodes          = "terraform-provider-windows-nodes"
	PolicyProbe          = "terraform-provider-windows-probe"
	PolicyRuntimeClasses = "terraform-provider-windows-runtimeclasses"
)
