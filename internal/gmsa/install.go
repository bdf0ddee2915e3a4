package gmsa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// WebhookName is the name of the windows-gmsa admission webhook inside its
// MutatingWebhookConfiguration and ValidatingWebhookConfiguration, the same
// in the Helm chart (charts/gmsa/templates/{mutating,validating}webhook.yaml)
// and in deploy-gmsa-webhook.sh's manifest (gmsa-webhook.yml.tpl), whatever
// release or NAME the configurations themselves carry.
const WebhookName = "admission-webhook.windows-gmsa.sigs.k8s.io"

// chartLabel is the label the Helm chart puts on both configurations,
// "gmsa-<chart version>" (charts/gmsa/templates/_helpers.tpl gmsa.chartref).
// deploy-gmsa-webhook.sh sets none: its version is then unknown.
const chartLabel = "chart"

// InstallHint is what to install when the webhook or the CRD is missing,
// as windows-gmsa's own README and charts/README.md say.
const InstallHint = "Install kubernetes-sigs/windows-gmsa, its CRD and admission webhook, with an administrator's kubeconfig: " +
	"`helm repo add windows-gmsa https://raw.githubusercontent.com/kubernetes-sigs/windows-gmsa/master/charts/repo` then " +
	"`helm install gmsa windows-gmsa/gmsa --namespace kube-system` (the chart needs cert-manager, or " +
	"`--set certificates.certManager.enabled=false` with its certificate secret), or run " +
	"https://github.com/kubernetes-sigs/windows-gmsa/blob/master/admission-webhook/deploy/deploy-gmsa-webhook.sh. " +
	"Without the webhook no pod's gmsaCredentialSpecName is resolved or authorized."

// Installation is what the cluster has of windows-gmsa.
type Installation struct {
	// CRDVersions are the served versions of the GMSACredentialSpec CRD;
	// empty when the CRD is missing.
	CRDVersions []string
	// Mutating and Validating name the webhook configurations holding
	// WebhookName; empty when none does.
	Mutating, Validating string
	// ChartVersion is the windows-gmsa chart version from the
	// configurations' chart label ("0.13.0"); empty when they carry none
	// (deploy-gmsa-webhook.sh's manifest).
	ChartVersion string
}

// Version is the installed webhook's version as the plan reports it.
func (in Installation) Version() string {
	if in.ChartVersion != "" {
		return in.ChartVersion
	}
	return "unknown"
}

// Problems lists what keeps the credential spec from working: a missing
// CRD, a CRD that does not serve v1 (windows-gmsa before its v1 CRD), a
// missing mutating or validating webhook. Empty when it is installed.
func (in Installation) Problems() []string {
	var out []string
	switch {
	case len(in.CRDVersions) == 0:
		out = append(out, fmt.Sprintf("the CustomResourceDefinition %s is not installed", CRDName))
	case !slices.Contains(in.CRDVersions, Version):
		out = append(out, fmt.Sprintf("the CustomResourceDefinition %s serves %s but not %s: upgrade windows-gmsa", CRDName, strings.Join(in.CRDVersions, ", "), Version))
	}
	if in.Mutating == "" {
		out = append(out, fmt.Sprintf("no MutatingWebhookConfiguration holds the webhook %s (it fills each pod's gmsaCredentialSpec from gmsaCredentialSpecName)", WebhookName))
	}
	if in.Validating == "" {
		out = append(out, fmt.Sprintf("no ValidatingWebhookConfiguration holds the webhook %s (it checks the pod's ServiceAccount may `use` the credential spec)", WebhookName))
	}
	return out
}

// ErrNotInstalled is wrapped by Check's error when windows-gmsa is not (or
// not wholly) installed.
var ErrNotInstalled = errors.New("windows-gmsa is not installed")

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Detect reads what the cluster has of windows-gmsa: the CRD (get by name)
// and the webhook configurations (list, matched by webhook name).
func Detect(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface) (Installation, error) {
	var in Installation
	crd, err := dyn.Resource(crdGVR).Get(ctx, CRDName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, fmt.Errorf("reading the CustomResourceDefinition %s: %w", CRDName, err)
	default:
		in.CRDVersions = servedVersions(crd)
	}
	mutating, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, fmt.Errorf("listing MutatingWebhookConfigurations: %w", err)
	}
	for _, c := range mutating.Items {
		if slices.ContainsFunc(c.Webhooks, func(w admissionv1.MutatingWebhook) bool { return w.Name == WebhookName }) {
			in.Mutating = c.Name
			in.ChartVersion = chartVersion(c.Labels)
		}
	}
	validating, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, fmt.Errorf("listing ValidatingWebhookConfigurations: %w", err)
	}
	for _, c := range validating.Items {
		if slices.ContainsFunc(c.Webhooks, func(w admissionv1.ValidatingWebhook) bool { return w.Name == WebhookName }) {
			in.Validating = c.Name
			if in.ChartVersion == "" {
				in.ChartVersion = chartVersion(c.Labels)
			}
		}
	}
	return in, nil
}

// Check is Detect, failing with ErrNotInstalled and every problem when
// windows-gmsa is not wholly installed.
func Check(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface) (Installation, error) {
	in, err := Detect(ctx, cs, dyn)
	if err != nil {
		return in, err
	}
	if p := in.Problems(); len(p) > 0 {
		return in, fmt.Errorf("%w: %s", ErrNotInstalled, strings.Join(p, "; "))
	}
	return in, nil
}

func servedVersions(crd *unstructured.Unstructured) []string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []string
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if served, _ := m["served"].(bool); served {
			if name, _ := m["name"].(string); name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

func chartVersion(labels map[string]string) string {
	v, ok := strings.CutPrefix(labels[chartLabel], "gmsa-")
	if !ok {
		return ""
	}
	// Helm's chartref replaces a version's "+" by "_".
	return strings.ReplaceAll(v, "_", "+")
}
