package kube

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestForbiddenTransport: a 403 keeps its reason and gains the pointer to
// the documented role; other errors pass as they are.
func TestForbiddenTransport(t *testing.T) {
	status := map[string]string{
		"/api/v1/namespaces/kube-system/secrets/forbidden": `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"secrets \"forbidden\" is forbidden: User \"u\" cannot get resource \"secrets\" in API group \"\" in the namespace \"kube-system\"",` +
			`"reason":"Forbidden","details":{"name":"forbidden","kind":"secrets"},"code":403}`,
		"/api/v1/namespaces/kube-system/secrets/missing": `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"secrets \"missing\" not found","reason":"NotFound","details":{"name":"missing","kind":"secrets"},"code":404}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/apis/authentication.k8s.io/v1/selfsubjectreviews":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":"u"}}}`)
		case strings.HasSuffix(r.URL.Path, "/forbidden"):
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, status[r.URL.Path])
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, status[r.URL.Path])
		}
	}))
	defer srv.Close()
	c, err := NewClient(t.Context(), Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CoreV1().Secrets("kube-system").Get(t.Context(), "forbidden", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot get resource "secrets"`) ||
		!strings.Contains(err.Error(), RBACManifest) {
		t.Errorf("forbidden: %v", err)
	}
	_, err = c.CoreV1().Secrets("kube-system").Get(t.Context(), "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || strings.Contains(err.Error(), RBACManifest) {
		t.Errorf("not found: %v", err)
	}
}

// TestInstallOnceWrite: a write of a DaemonSet, ConfigMap, ServiceAccount,
// RBAC object or RuntimeClass is an install-once write (its 403 points to the
// administrator's identity); reads, and writes of what the everyday role
// holds (Secrets, Nodes, pods), are not.
func TestInstallOnceWrite(t *testing.T) {
	cases := []struct {
		method, path string
		want         bool
	}{
		{http.MethodPatch, "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy-windows", true},
		{http.MethodPost, "/api/v1/namespaces/kube-system/configmaps", true},
		{http.MethodPost, "/api/v1/namespaces/kube-system/serviceaccounts", true},
		{http.MethodPost, "/apis/node.k8s.io/v1/runtimeclasses", true},
		{http.MethodDelete, "/apis/node.k8s.io/v1/runtimeclasses/win", true},
		{http.MethodPatch, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/x", true},
		{http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings", true},
		{http.MethodGet, "/apis/node.k8s.io/v1/runtimeclasses", false},
		{http.MethodGet, "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy", false},
		{http.MethodPost, "/api/v1/namespaces/kube-system/secrets", false},
		{http.MethodPatch, "/api/v1/nodes/win-0", false},
		{http.MethodPost, "/api/v1/namespaces/terraform-provider-windows/pods", false},
		{http.MethodPost, "/api/v1/namespaces", false},
	}
	for _, c := range cases {
		req, err := http.NewRequest(c.method, "https://cluster.invalid:6443"+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := installOnceWrite(req); got != c.want {
			t.Errorf("%s %s: installOnceWrite %v, want %v", c.method, c.path, got, c.want)
		}
	}
}
