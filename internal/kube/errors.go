package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// NotFoundError says the object a finder looked for does not exist. Read
// turns it into RemoveResource plus a warning.
type NotFoundError struct {
	Kind, Name string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.Name) }

// IsNotFound reports whether err (or anything it wraps) is a NotFoundError.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

// notFoundOr converts the API server's 404 into a NotFoundError and returns
// other errors as they are.
func notFoundOr(err error, kind, name string) error {
	if apierrors.IsNotFound(err) {
		return &NotFoundError{Kind: kind, Name: name}
	}
	return err
}

// RBACManifest is the provider's documented role, which a Forbidden error
// points to.
const RBACManifest = "examples/rbac/terraform-provider-windows.yaml"

// forbiddenHint is appended to every 403's message. The API server's own
// message names the user, verb, resource and namespace ("User \"x\" cannot
// create resource \"secrets\" in API group \"\" in the namespace
// \"kube-system\""); this says where the permission is documented.
const forbiddenHint = ". The provider's Kubernetes identity lacks this permission, which the provider's role grants: " +
	"bind the roles of " + RBACManifest + " (guide \"Least privilege\") to it"

// policyHint is appended to a 403 from a ValidatingAdmissionPolicy ("ValidatingAdmissionPolicy
// 'x' with binding 'x' denied request: ..."), the refusal of a call the
// provider's role grants but its admission policies narrow.
const policyHint = ". An admission policy refused it: the provider's policies in " + RBACManifest +
	" let it change only its own objects (guide \"Least privilege\")"

// adminHint is appended instead of forbiddenHint to a 403 on a write of
// what a cluster installs once (installOnceResources): the everyday role
// grants none of them by design, so binding more roles to it is the wrong
// fix; an administrator's identity applies those resources.
const adminHint = ". This object is installed once per cluster, with an administrator's identity, as kubeadm installs its " +
	"add-ons with admin.conf: apply windows_node_networking, windows_runtime_class, windows_linux_daemonset_guard and " +
	"windows_gmsa_credential_spec " +
	"through a provider configuration of their own (`provider \"windows\" { alias = \"admin\" ... }` with a cluster " +
	"administrator's kubeconfig, and `provider = windows.admin` in the resource); the everyday role of " + RBACManifest +
	" grants no write on them (guide \"Least privilege\")"

// installOnceResources are the API resources (the path segment after the
// group and version, or the namespace) that only the install-once
// resources write: the networking agents' DaemonSets, ConfigMaps,
// ServiceAccounts and RBAC, RuntimeClasses, a guarded DaemonSet, and a
// GMSACredentialSpec with its role and bindings.
var installOnceResources = map[string]bool{
	"daemonsets": true, "configmaps": true, "serviceaccounts": true, "runtimeclasses": true,
	"clusterroles": true, "clusterrolebindings": true, "roles": true, "rolebindings": true,
	"gmsacredentialspecs": true,
}

// installOnceWrite reports whether req writes (anything but GET, HEAD) an
// object of installOnceResources.
func installOnceWrite(req *http.Request) bool {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	// /api/v1[/namespaces/<ns>]/<resource>[/<name>], /apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>]
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			return installOnceResources[parts[i+2]]
		}
	}
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		return installOnceResources[parts[2]]
	case len(parts) >= 4 && parts[0] == "apis":
		return installOnceResources[parts[3]]
	}
	return false
}

// forbiddenTransport adds forbiddenHint (or policyHint) to the Status of every 403 Forbidden
// response, in one place for every call the provider makes: the message
// reaches the diagnostic through whatever wraps the error, and
// apierrors.IsForbidden (which reads the reason, not the text) still holds.
// The API server answers in the encoding the client negotiated (protobuf
// for built-in types): the Status is decoded from it and returned as JSON,
// which every client decodes.
type forbiddenTransport struct{ next http.RoundTripper }

func (t forbiddenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close() // fully read: its close error changes nothing
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	st, ok := obj.(*metav1.Status)
	if err != nil || !ok || st.Reason != metav1.StatusReasonForbidden ||
		strings.HasSuffix(st.Message, forbiddenHint) || strings.HasSuffix(st.Message, policyHint) || strings.HasSuffix(st.Message, adminHint) {
		return resp, nil
	}
	// An admission policy's refusal is no missing permission: binding more
	// roles would not help, and the policy's message says what it allows.
	switch {
	case strings.Contains(st.Message, " is forbidden: ValidatingAdmissionPolicy '"):
		st.Message += policyHint
	case installOnceWrite(req):
		st.Message += adminHint
	default:
		st.Message += forbiddenHint
	}
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	b, err := json.Marshal(st)
	if err != nil {
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Del("Content-Length")
	return resp, nil
}
