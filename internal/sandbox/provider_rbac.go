package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
)

// providerTokenLifetime is how long the provider's ServiceAccount token is
// valid: longer than any test run or `make sandbox` session needs.
const providerTokenLifetime = 24 * time.Hour

// ProviderRBAC decodes the provider's documented RBAC manifest
// (examples/rbac/terraform-provider-windows.yaml): the everyday identity's
// roles, bindings and admission policies.
func ProviderRBAC() ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(rbac.Manifest)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the RBAC manifest: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decoding the RBAC manifest: %w", err)
		}
		out = append(out, obj)
	}
}

// ApplyRBAC creates the objects (ProviderRBAC's, or edited ones), as an
// admin applying the manifest would; an object that exists already is left
// as it is.
func ApplyRBAC(ctx context.Context, cs kubernetes.Interface, objs []runtime.Object) error {
	create := metav1.CreateOptions{}
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, create)
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, create)
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, create)
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, create)
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, create)
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, create)
		case *admissionv1.ValidatingAdmissionPolicy:
			_, err = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, o, create)
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			_, err = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, o, create)
		default:
			return fmt.Errorf("applying RBAC: unexpected %T", obj)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("applying RBAC %s: %w", describe(obj), err)
		}
	}
	return nil
}

func describe(obj runtime.Object) string {
	kind := fmt.Sprintf("%T", obj)
	if m, ok := obj.(metav1.Object); ok {
		if m.GetNamespace() != "" {
			return kind + " " + m.GetNamespace() + "/" + m.GetName()
		}
		return kind + " " + m.GetName()
	}
	return kind
}

// WriteServiceAccountKubeconfig writes a kubeconfig for the ServiceAccount
// namespace/name, authenticating with a token from the TokenRequest API (a
// bound token: no Secret holds it, and it expires).
func (s *Sandbox) WriteServiceAccountKubeconfig(ctx context.Context, namespace, name, path string) error {
	secs := int64(providerTokenLifetime / time.Second)
	tr, err := s.ControlPlane.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	const ctxName = "sandbox"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ctxName] = &clientcmdapi.Cluster{Server: s.ControlPlane.Server, CertificateAuthorityData: s.CA.CertPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[ctxName] = &clientcmdapi.Context{Cluster: ctxName, AuthInfo: name}
	cfg.CurrentContext = ctxName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// issueProviderKubeconfig applies the documented RBAC manifest and writes
// ProviderKubeconfig, the provider's identity: its ServiceAccount.
func (s *Sandbox) issueProviderKubeconfig(ctx context.Context) error {
	objs, err := ProviderRBAC()
	if err != nil {
		return err
	}
	if err := ApplyRBAC(ctx, s.ControlPlane.Client, objs); err != nil {
		return err
	}
	if err := s.WriteServiceAccountKubeconfig(ctx, rbac.Namespace, rbac.ServiceAccount, s.ProviderKubeconfig); err != nil {
		return err
	}
	return s.waitForProviderPolicies(ctx)
}

// policyLoadTimeout bounds the wait for the API server to enforce the
// manifest's admission policies: it loads them within a second or two.
const policyLoadTimeout = 30 * time.Second

// waitForProviderPolicies returns once the API server enforces the
// manifest's admission policies for the provider's ServiceAccount. It loads
// them asynchronously, from informers, and no API tells when it has (a
// policy's status.typeChecking comes from another controller), so a request
// the last policy refuses is the proof, sent as a dry run (nothing is
// written) until refused: an unlabelled Service in the provider's
// namespace. The API server's policy source compiles every policy and
// binding its informers hold at each refresh, and each informer delivers its
// objects in creation order, so once the manifest's last policy and binding
// (rbac.PolicyProbe) hold, the earlier ones do too.
func (s *Sandbox) waitForProviderPolicies(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", s.ProviderKubeconfig)
	if err != nil {
		return err
	}
	provider, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, policyLoadTimeout)
	defer cancel()
	probe := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "tpw-policy-probe", Namespace: rbac.Namespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := provider.CoreV1().Services(rbac.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+rbac.PolicyProbe+"'") {
			return nil
		}
		if err != nil && !apierrors.IsForbidden(err) {
			return fmt.Errorf("probing the provider's admission policies: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the API server did not enforce the admission policy %s within %s (last answer: %v)", rbac.PolicyProbe, policyLoadTimeout, err)
		case <-tick.C:
		}
	}
}

// RenameIdentity rewrites ProviderRBAC's objects for another ServiceAccount
// of the same namespace, name: its roles and bindings named after it, so
// that a test can issue an identity with an edited role next to the
// provider's own.
func RenameIdentity(objs []runtime.Object, name string) []runtime.Object {
	rename := func(s string) string {
		if rest, ok := strings.CutPrefix(s, rbac.ServiceAccount); ok {
			return name + rest
		}
		return s
	}
	var out []runtime.Object
	for _, obj := range objs {
		obj = obj.DeepCopyObject()
		switch o := obj.(type) {
		case *corev1.Namespace, *admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding:
			// Shared: the policies hold every ServiceAccount of the namespace.
			continue
		case *corev1.ServiceAccount:
			o.Name = rename(o.Name)
		case *rbacv1.ClusterRole:
			o.Name = rename(o.Name)
		case *rbacv1.Role:
			o.Name = rename(o.Name)
		case *rbacv1.ClusterRoleBinding:
			o.Name, o.RoleRef.Name = rename(o.Name), rename(o.RoleRef.Name)
			for i := range o.Subjects {
				o.Subjects[i].Name = rename(o.Subjects[i].Name)
			}
		case *rbacv1.RoleBinding:
			o.Name, o.RoleRef.Name = rename(o.Name), rename(o.RoleRef.Name)
			for i := range o.Subjects {
				o.Subjects[i].Name = rename(o.Subjects[i].Name)
			}
		}
		out = append(out, obj)
	}
	return out
}

// WithoutVerb removes verb from every rule of objs' roles that grants it on
// resource of apiGroup, and reports whether any did.
func WithoutVerb(objs []runtime.Object, apiGroup, resource, verb string) bool {
	removed := false
	edit := func(rules []rbacv1.PolicyRule) {
		for i, r := range rules {
			if slices.Contains(r.APIGroups, apiGroup) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				rules[i].Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return v == verb })
				removed = true
			}
		}
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			edit(o.Rules)
		case *rbacv1.Role:
			edit(o.Rules)
		}
	}
	return removed
}

// IssueProviderCertificate issues a client certificate for user and binds
// to it the documented roles (ProviderRBAC's, bound to the user instead of
// the ServiceAccount): the provider's permissions for configurations that
// authenticate with a certificate (kubernetes.client_certificate). The
// certificate's organization is rbac.Group, as the manifest tells an admin
// binding the roles to a user, so that the admission policies hold it too.
func (s *Sandbox) IssueProviderCertificate(ctx context.Context, user string) (certPEM, keyPEM []byte, err error) {
	objs, err := ProviderRBAC()
	if err != nil {
		return nil, nil, err
	}
	subject := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	prefix := strings.NewReplacer(":", "-").Replace(user)
	var bound []runtime.Object
	for _, obj := range RenameIdentity(objs, prefix) {
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			continue
		case *rbacv1.ClusterRoleBinding:
			o.Subjects = subject
		case *rbacv1.RoleBinding:
			o.Subjects = subject
		}
		bound = append(bound, obj)
	}
	if err := ApplyRBAC(ctx, s.ControlPlane.Client, bound); err != nil {
		return nil, nil, err
	}
	return s.CA.IssueClient(user, rbac.Group)
}

// IssueAdminCertificate issues a client certificate for user in the group
// system:masters, the administrator's identity that applies what a cluster
// installs once (windows_node_networking, windows_runtime_class,
// windows_linux_daemonset_guard), as kubeadm's admin.conf does.
func (s *Sandbox) IssueAdminCertificate(user string) (certPEM, keyPEM []byte, err error) {
	return s.CA.IssueClient(user, "system:masters")
}

// AdminServiceAccount is a ServiceAccount of kube-system bound to
// cluster-admin: an administrator's identity that authenticates with a
// token (AdminToken), for tests of token and exec-plugin credentials on
// the install-once resources.
const AdminServiceAccount = "terraform-provider-windows-admin"

// AdminToken creates AdminServiceAccount and its binding when missing and
// returns a token of it, valid for lifetime.
func (s *Sandbox) AdminToken(ctx context.Context, lifetime time.Duration) (string, error) {
	cs := s.ControlPlane.Client
	objs := []runtime.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: AdminServiceAccount, Namespace: metav1.NamespaceSystem}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: AdminServiceAccount},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: AdminServiceAccount, Namespace: metav1.NamespaceSystem}},
		},
	}
	if err := ApplyRBAC(ctx, cs, objs); err != nil {
		return "", err
	}
	secs := int64(lifetime / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceSystem).CreateToken(ctx, AdminServiceAccount,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount kube-system/%s: %w", AdminServiceAccount, err)
	}
	return tr.Status.Token, nil
}
