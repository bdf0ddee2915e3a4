// Package gmsawebhook gives the sandbox's cluster kubernetes-sigs/windows-gmsa:
// its CRD (gmsa-crd.yml, upstream's own file) and an admission webhook
// registered with the real API server, which resolves a pod's
// gmsaCredentialSpecName into gmsaCredentialSpec and refuses pods whose
// ServiceAccount may not `use` the credential spec.
//
// Why not upstream's program: windows-gmsa's webhook
// (github.com/kubernetes-sigs/windows-gmsa/admission-webhook, a main
// package) is not served by the Go module proxy the sandbox builds from
// (proxy.golang.org answers 403 "This module version is not available" for
// its list and for a pseudo-version of v0.13.0's commit 993de21), and as a
// main package it cannot be imported. This server follows that commit's
// webhook.go and kube_client.go, behaviour for behaviour, and refuses what
// it does not model:
//
//   - /mutate, CREATE: for the pod's and each container's windowsOptions that
//     name a credential spec without its contents, a JSON patch adding
//     gmsaCredentialSpec, the JSON of the GMSACredentialSpec's credspec
//     (retrieveCredSpecContents); a name that does not exist is refused with
//     404 "cred spec <name> does not exist".
//   - /validate, CREATE: a LocalSubjectAccessReview of verb use on
//     gmsacredentialspecs/<name> for system:serviceaccount:<ns>:<sa>
//     (isAuthorizedToUseCredSpec), refused 403 "service account %q is not
//     authorized to `use` GMSA cred spec %q"; contents that differ from the
//     resource's refused 422; contents without a name refused 422.
//   - /validate, UPDATE: any change of the GMSA name or contents refused 403
//     (validateUpdateRequest).
//   - RANDOM_HOSTNAME is not modelled: the sandbox never sets it, as the
//     chart's default (randomHostname: false) does not.
//
// The configurations carry upstream's webhook name and the chart's
// "chart: gmsa-<version>" label of the version this follows, so the
// provider's check reads them as it reads a Helm install.
package gmsawebhook

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	regv1 "k8s.io/api/admissionregistration/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Upstream's names (charts/gmsa, admission-webhook/deploy).
const (
	WebhookName = "admission-webhook.windows-gmsa.sigs.k8s.io"
	// ConfigName is deploy-gmsa-webhook.sh's default NAME, which names both
	// configurations.
	ConfigName = "gmsa-webhook"
	// ChartVersion is the windows-gmsa release this server follows.
	ChartVersion = "0.13.0"
	crdName      = "gmsacredentialspecs.windows.k8s.io"
)

//go:embed gmsa-crd.yml
var crdManifest []byte

var (
	crdGVR      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	credSpecGVR = schema.GroupVersionResource{Group: "windows.k8s.io", Version: "v1", Resource: "gmsacredentialspecs"}
)

// Webhook is the running server and its registration.
type Webhook struct {
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	srv  *http.Server
	ln   net.Listener
	Logf func(string, ...any)
}

// Options are what Install needs.
type Options struct {
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
	// CertPEM, KeyPEM serve 127.0.0.1; CABundle is the CA the API server
	// verifies them with.
	CertPEM, KeyPEM, CABundle []byte
	// NamespaceSelector picks the namespaces whose pods go through the
	// webhook. Upstream's selects every namespace but its own; the sandbox
	// cluster is shared by tests running at once, and a webhook with
	// failurePolicy Fail must not see the pods of tests that did not ask
	// for it.
	NamespaceSelector *metav1.LabelSelector
	Logf              func(string, ...any)
}

// Install creates the CRD (waiting until the API server serves it),
// starts the server on 127.0.0.1 and registers both configurations, as the
// chart does (failurePolicy Fail, sideEffects None, pods CREATE for
// mutation, CREATE and UPDATE for validation). Stop undoes it all.
func Install(ctx context.Context, o Options) (*Webhook, error) {
	w := &Webhook{cs: o.Clientset, dyn: o.Dynamic, Logf: o.Logf}
	if w.Logf == nil {
		w.Logf = func(string, ...any) {}
	}
	if err := w.installCRD(ctx); err != nil {
		return nil, err
	}
	if err := w.serve(o.CertPEM, o.KeyPEM); err != nil {
		return nil, err
	}
	url := "https://" + w.ln.Addr().String()
	fail, none := regv1.Fail, regv1.SideEffectClassNone
	labels := map[string]string{"chart": "gmsa-" + ChartVersion}
	rule := func(ops ...regv1.OperationType) []regv1.RuleWithOperations {
		return []regv1.RuleWithOperations{{Operations: ops, Rule: regv1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{"pods"}}}}
	}
	client := func(path string) regv1.WebhookClientConfig {
		u := url + path
		return regv1.WebhookClientConfig{URL: &u, CABundle: o.CABundle}
	}
	mut := &regv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigName, Labels: labels},
		Webhooks: []regv1.MutatingWebhook{{
			Name: WebhookName, ClientConfig: client("/mutate"), Rules: rule(regv1.Create),
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1", "v1beta1"},
			NamespaceSelector: o.NamespaceSelector,
		}},
	}
	val := &regv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigName, Labels: labels},
		Webhooks: []regv1.ValidatingWebhook{{
			Name: WebhookName, ClientConfig: client("/validate"), Rules: rule(regv1.Create, regv1.Update),
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1", "v1beta1"},
			NamespaceSelector: o.NamespaceSelector,
		}},
	}
	if _, err := w.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mut, metav1.CreateOptions{}); err != nil {
		w.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("registering the mutating webhook: %w", err)
	}
	if _, err := w.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, val, metav1.CreateOptions{}); err != nil {
		w.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("registering the validating webhook: %w", err)
	}
	return w, nil
}

// Stop removes the configurations and the CRD (and with it every
// GMSACredentialSpec) and stops the server.
func (w *Webhook) Stop(ctx context.Context) {
	_ = w.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, ConfigName, metav1.DeleteOptions{})
	_ = w.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, ConfigName, metav1.DeleteOptions{})
	_ = w.dyn.Resource(crdGVR).Delete(ctx, crdName, metav1.DeleteOptions{})
	if w.srv != nil {
		_ = w.srv.Close()
	}
}

// installCRD creates the CRD and waits, on a watch, until it is
// Established: until then the API server does not serve the resource.
func (w *Webhook) installCRD(ctx context.Context) error {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(crdManifest, &obj.Object); err != nil {
		return fmt.Errorf("reading gmsa-crd.yml: %w", err)
	}
	if _, err := w.dyn.Resource(crdGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the CRD %s: %w", crdName, err)
	}
	watch, err := w.dyn.Resource(crdGVR).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + crdName})
	if err != nil {
		return err
	}
	defer watch.Stop()
	for ev := range watch.ResultChan() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok && established(u) {
			return nil
		}
	}
	return fmt.Errorf("waiting for the CRD %s to be established: %w", crdName, context.Cause(ctx))
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func (w *Webhook) serve(certPEM, keyPEM []byte) error {
	cert, err := tlsCertificate(certPEM, keyPEM)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	w.ln = ln
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(rw http.ResponseWriter, r *http.Request) { w.handle(rw, r, w.mutate) })
	mux.HandleFunc("/validate", func(rw http.ResponseWriter, r *http.Request) { w.handle(rw, r, w.validate) })
	w.srv = &http.Server{Handler: mux, TLSConfig: cert, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.srv.ServeTLS(ln, "", "") }()
	return nil
}

// admissionError is a refusal with upstream's HTTP code and message.
type admissionError struct {
	code int32
	msg  string
}

func (w *Webhook) handle(rw http.ResponseWriter, r *http.Request, review func(context.Context, *admissionv1.AdmissionRequest, *corev1.Pod) (*admissionv1.AdmissionResponse, *admissionError)) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(rw, "expected a JSON POST", http.StatusBadRequest)
		return
	}
	var in admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
		http.Error(rw, "no admission review request", http.StatusBadRequest)
		return
	}
	req := in.Request
	var resp *admissionv1.AdmissionResponse
	var aerr *admissionError
	pod := &corev1.Pod{}
	if req.Kind.Kind != "Pod" {
		aerr = &admissionError{http.StatusBadRequest, fmt.Sprintf("expected a Pod object, got a %v", req.Kind.Kind)}
	} else if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		aerr = &admissionError{http.StatusBadRequest, fmt.Sprintf("unable to unmarshall pod JSON object: %v", err)}
	} else {
		resp, aerr = review(r.Context(), req, pod)
	}
	if aerr != nil {
		w.Logf("gmsa webhook: refusing pod %s/%s: %s", req.Namespace, pod.Name, aerr.msg)
		resp = &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: aerr.msg, Code: aerr.code}}
	}
	resp.UID = req.UID
	out, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{Kind: "AdmissionReview", APIVersion: "admission.k8s.io/v1"}, Response: resp})
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(out)
}

// options is one windowsOptions of the pod: the pod's own (container -1)
// or a container's.
type options struct {
	opts      *corev1.WindowsSecurityContextOptions
	kind      string // "pod" or "container"
	name      string
	container int
}

// windowsOptions lists the pod's windowsOptions and its containers', in
// upstream's order (iterateOverWindowsSecurityOptions: init containers are
// not visited).
func windowsOptions(pod *corev1.Pod) []options {
	var out []options
	if sc := pod.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		out = append(out, options{sc.WindowsOptions, "pod", pod.Name, -1})
	}
	for i, c := range pod.Spec.Containers {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			out = append(out, options{c.SecurityContext.WindowsOptions, "container", c.Name, i})
		}
	}
	return out
}

func (w *Webhook) mutate(ctx context.Context, req *admissionv1.AdmissionRequest, pod *corev1.Pod) (*admissionv1.AdmissionResponse, *admissionError) {
	if req.Operation != admissionv1.Create {
		return &admissionv1.AdmissionResponse{Allowed: true}, nil
	}
	var patches []map[string]string
	for _, o := range windowsOptions(pod) {
		if o.opts.GMSACredentialSpecName == nil || o.opts.GMSACredentialSpec != nil {
			continue
		}
		contents, aerr := w.contents(ctx, *o.opts.GMSACredentialSpecName)
		if aerr != nil {
			return nil, aerr
		}
		path := "/spec/securityContext/windowsOptions/gmsaCredentialSpec"
		if o.container >= 0 {
			path = fmt.Sprintf("/spec/containers/%d/securityContext/windowsOptions/gmsaCredentialSpec", o.container)
		}
		patches = append(patches, map[string]string{"op": "add", "path": path, "value": contents})
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	if len(patches) > 0 {
		raw, _ := json.Marshal(patches)
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = raw, &pt
	}
	return resp, nil
}

func (w *Webhook) validate(ctx context.Context, req *admissionv1.AdmissionRequest, pod *corev1.Pod) (*admissionv1.AdmissionResponse, *admissionError) {
	switch req.Operation {
	case admissionv1.Create:
		for _, o := range windowsOptions(pod) {
			name := o.opts.GMSACredentialSpecName
			if name == nil {
				if o.opts.GMSACredentialSpec != nil {
					return nil, &admissionError{http.StatusUnprocessableEntity, fmt.Sprintf("%s %q has a GMSA cred spec set, but does not define the name of the corresponding resource", o.kind, o.name)}
				}
				continue
			}
			if ok, reason, err := w.mayUse(ctx, pod.Spec.ServiceAccountName, req.Namespace, *name); err != nil || !ok {
				msg := fmt.Sprintf("service account %q is not authorized to `use` GMSA cred spec %q", pod.Spec.ServiceAccountName, *name)
				if err != nil {
					reason = err.Error()
				}
				if reason != "" {
					msg += fmt.Sprintf(", reason: %q", reason)
				}
				return nil, &admissionError{http.StatusForbidden, msg}
			}
			if o.opts.GMSACredentialSpec != nil {
				want, aerr := w.contents(ctx, *name)
				if aerr != nil {
					return nil, aerr
				}
				if !sameJSON(*o.opts.GMSACredentialSpec, want) {
					return nil, &admissionError{http.StatusUnprocessableEntity, fmt.Sprintf("the GMSA cred spec contents for %s %q does not match the contents of GMSA resource %q", o.kind, o.name, *name)}
				}
			}
		}
	case admissionv1.Update:
		old := &corev1.Pod{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return nil, &admissionError{http.StatusBadRequest, fmt.Sprintf("unable to unmarshall pod JSON object: %v", err)}
		}
		before := map[string]*corev1.WindowsSecurityContextOptions{}
		for _, o := range windowsOptions(old) {
			before[o.kind+"/"+o.name] = o.opts
		}
		for _, o := range windowsOptions(pod) {
			prev := before[o.kind+"/"+o.name]
			if o.kind == "pod" {
				prev = nil
				if sc := old.Spec.SecurityContext; sc != nil {
					prev = sc.WindowsOptions
				}
			}
			if prev == nil {
				prev = &corev1.WindowsSecurityContextOptions{}
			}
			var changed []string
			if !reflect.DeepEqual(o.opts.GMSACredentialSpecName, prev.GMSACredentialSpecName) {
				changed = append(changed, "name")
			}
			if !reflect.DeepEqual(o.opts.GMSACredentialSpec, prev.GMSACredentialSpec) {
				changed = append(changed, "contents")
			}
			if len(changed) > 0 {
				return nil, &admissionError{http.StatusForbidden, fmt.Sprintf("cannot update an existing pod's GMSA settings (GMSA %s modified on %s %q)", strings.Join(changed, " and "), o.kind, o.name)}
			}
		}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}, nil
}

// contents is the JSON of the GMSACredentialSpec's credspec, as upstream
// marshals it (encoding/json of the object's map: keys sorted).
func (w *Webhook) contents(ctx context.Context, name string) (string, *admissionError) {
	obj, err := w.dyn.Resource(credSpecGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", &admissionError{http.StatusNotFound, fmt.Sprintf("cred spec %s does not exist", name)}
	}
	if err != nil {
		return "", &admissionError{http.StatusInternalServerError, fmt.Sprintf("unable to retrieve the contents of cred spec %s: %v", name, err)}
	}
	content, ok := obj.Object["credspec"]
	if !ok {
		return "", &admissionError{http.StatusExpectationFailed, fmt.Sprintf("cred spec %s does not have a credspec key", name)}
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return "", &admissionError{http.StatusInternalServerError, fmt.Sprintf("unable to marshall cred spec %s into a JSON: %v", name, err)}
	}
	return string(raw), nil
}

// mayUse asks the API server, as upstream does, whether the ServiceAccount
// may `use` the credential spec.
func (w *Webhook) mayUse(ctx context.Context, serviceAccount, namespace, name string) (bool, string, error) {
	if serviceAccount == "" {
		serviceAccount = "default"
	}
	review := &authzv1.LocalSubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace},
		Spec: authzv1.SubjectAccessReviewSpec{
			User: fmt.Sprintf("system:serviceaccount:%s:%s", namespace, serviceAccount),
			ResourceAttributes: &authzv1.ResourceAttributes{
				Namespace: namespace, Verb: "use", Group: credSpecGVR.Group, Resource: credSpecGVR.Resource, Name: name,
			},
		},
	}
	out, err := w.cs.AuthorizationV1().LocalSubjectAccessReviews(namespace).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return out.Status.Allowed, out.Status.Reason, nil
}

func sameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var x, y map[string]any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
