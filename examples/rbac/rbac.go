// Package rbac ships the provider's Kubernetes RBAC manifest
// (terraform-provider-windows.yaml) to the code that applies it: the sandbox
// issues the provider a ServiceAccount bound by this very file, so the
// documented role and the one the acceptance tests run with are one.
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
)
