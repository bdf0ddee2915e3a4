// Package kube holds everything the provider asks of the Kubernetes API:
// building a client from provider settings, and the finders, writers and
// watch-based waiters for the objects the resources manage.
//
// It never imports the plugin framework: resources convert their models into
// the plain types here, so the same code serves Read, the waiters and the
// acceptance tests' CheckDestroy.
package kube
