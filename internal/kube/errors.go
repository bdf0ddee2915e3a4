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
		strings.HasSuffix(st.Message, forbiddenHint) || strings.HasSuffix(st.Message, policyHint) {
		return resp, nil
	}
	// An admission policy's refusal is no missing permission: binding more
	// roles would not help, and the policy's message says what it allows.
	if strings.Contains(st.Message, " is forbidden: ValidatingAdmissionPolicy '") {
		st.Message += policyHint
	} else {
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
