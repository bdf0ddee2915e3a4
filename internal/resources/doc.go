// Package resources holds the provider's resources and data sources, one file
// each. They stay thin: convert the Terraform model into the plain request
// types of internal/kube, internal/vsphere, internal/bootstrap and
// internal/remote, call them, and map the result back. Only this package
// touches plugin-framework types (besides internal/provider).
package resources
