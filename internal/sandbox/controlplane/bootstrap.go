package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Names kubeadm gives the objects that let nodes join with a bootstrap token.
const (
	BootstrapTokenGroup = "system:bootstrappers:kubeadm:default-node-token"
	NodesGroup          = "system:nodes"
	KubeDNSServiceName  = "kube-dns"
	// ClusterInfoConfigMap lives in kube-public and is readable anonymously.
	ClusterInfoConfigMap = "cluster-info"
	KubeadmConfigMap     = "kubeadm-config"
	KubeletConfigMap     = "kubelet-config"
)

// bootstrapCluster creates what `kubeadm init` adds to a fresh cluster and
// our provider relies on: the bootstrap-token RBAC, the cluster-info and
// kubeadm-config ConfigMaps, the kubelet-config ConfigMap, and a kube-dns
// Service at the well-known address (no DNS pods: nothing resolves, but
// discovery finds the real object).
func bootstrapCluster(ctx context.Context, cs kubernetes.Interface, server string, caPEM []byte) error {
	steps := []struct {
		what string
		do   func(context.Context, kubernetes.Interface) error
	}{
		{"bootstrap-token RBAC", createBootstrapRBAC},
		{"cluster-info", func(ctx context.Context, cs kubernetes.Interface) error {
			return createClusterInfo(ctx, cs, server, caPEM)
		}},
		{"kubeadm-config", func(ctx context.Context, cs kubernetes.Interface) error {
			return createKubeadmConfig(ctx, cs, server)
		}},
		{"kubelet-config", createKubeletConfig},
		{"kube-dns Service", createKubeDNSService},
	}
	for _, s := range steps {
		if err := s.do(ctx, cs); err != nil {
			return fmt.Errorf("creating %s: %w", s.what, err)
		}
	}
	return nil
}

// ignoreExists lets a step run against a cluster that already has the object.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func clusterRoleBinding(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}
}

func createBootstrapRBAC(ctx context.Context, cs kubernetes.Interface) error {
	rbac := cs.RbacV1()
	_, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:get-nodes"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	if err := ignoreExists(err); err != nil {
		return err
	}
	bindings := []*rbacv1.ClusterRoleBinding{
		// Bootstrap tokens may create CSRs ...
		clusterRoleBinding("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", group(BootstrapTokenGroup)),
		// ... which the controller manager approves automatically ...
		clusterRoleBinding("kubeadm:node-autoapprove-bootstrap",
			"system:certificates.k8s.io:certificatesigningrequests:nodeclient", group(BootstrapTokenGroup)),
		// ... as it does the renewals of nodes' own client certificates.
		clusterRoleBinding("kubeadm:node-autoapprove-certificate-rotation",
			"system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", group(NodesGroup)),
		// kubeadm join checks whether a node of the same name exists.
		clusterRoleBinding("kubeadm:get-nodes", "kubeadm:get-nodes", group(BootstrapTokenGroup)),
	}
	for _, b := range bindings {
		if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return err
		}
	}
	return nil
}

// createNamespacedReader creates a Role granting get on one ConfigMap, and
// its RoleBinding to subjects, as kubeadm does for each ConfigMap nodes read.
func createNamespacedReader(ctx context.Context, cs kubernetes.Interface, namespace, name, configMap string, subjects ...rbacv1.Subject) error {
	_, err := cs.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{configMap}, Verbs: []string{"get"},
		}},
	}, metav1.CreateOptions{})
	if err := ignoreExists(err); err != nil {
		return err
	}
	_, err = cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   subjects,
	}, metav1.CreateOptions{})
	return ignoreExists(err)
}

func createConfigMap(ctx context.Context, cs kubernetes.Interface, namespace, name string, data map[string]string) error {
	_, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       data,
	}, metav1.CreateOptions{})
	return ignoreExists(err)
}

func createClusterInfo(ctx context.Context, cs kubernetes.Interface, server string, caPEM []byte) error {
	kc, err := clusterInfoKubeconfig(server, caPEM)
	if err != nil {
		return err
	}
	if err := createConfigMap(ctx, cs, metav1.NamespacePublic, ClusterInfoConfigMap, map[string]string{"kubeconfig": string(kc)}); err != nil {
		return err
	}
	return createNamespacedReader(ctx, cs, metav1.NamespacePublic, "kubeadm:bootstrap-signer-clusterinfo", ClusterInfoConfigMap,
		rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:anonymous"})
}

// clusterConfiguration is the kubeadm ClusterConfiguration of the sandbox.
func clusterConfiguration(endpoint string) string {
	return fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: %s
kubernetesVersion: %s
controlPlaneEndpoint: %s
certificatesDir: /etc/kubernetes/pki
imageRepository: registry.k8s.io
apiServer: {}
controllerManager: {}
scheduler: {}
dns: {}
etcd:
  local:
    dataDir: /var/lib/etcd
networking:
  dnsDomain: %s
  podSubnet: %s
  serviceSubnet: %s
`, ClusterName, KubernetesVersion, endpoint, DNSDomain, ClusterCIDR, ServiceCIDR)
}

func createKubeadmConfig(ctx context.Context, cs kubernetes.Interface, server string) error {
	endpoint := server[len("https://"):]
	err := createConfigMap(ctx, cs, metav1.NamespaceSystem, KubeadmConfigMap,
		map[string]string{"ClusterConfiguration": clusterConfiguration(endpoint)})
	if err != nil {
		return err
	}
	return createNamespacedReader(ctx, cs, metav1.NamespaceSystem, "kubeadm:nodes-kubeadm-config", KubeadmConfigMap,
		group(BootstrapTokenGroup), group(NodesGroup))
}

// kubeletConfiguration is the cluster-wide kubelet configuration kubeadm
// publishes; joining nodes take clusterDNS and clusterDomain from it.
func kubeletConfiguration() string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
clusterDNS:
- %s
clusterDomain: %s
rotateCertificates: true
`, DNSServiceIP, DNSDomain)
}

func createKubeletConfig(ctx context.Context, cs kubernetes.Interface) error {
	err := createConfigMap(ctx, cs, metav1.NamespaceSystem, KubeletConfigMap, map[string]string{"kubelet": kubeletConfiguration()})
	if err != nil {
		return err
	}
	return createNamespacedReader(ctx, cs, metav1.NamespaceSystem, "kubeadm:kubelet-config", KubeletConfigMap,
		group(BootstrapTokenGroup), group(NodesGroup))
}

func createKubeDNSService(ctx context.Context, cs kubernetes.Interface) error {
	labels := map[string]string{
		"k8s-app":                       "kube-dns",
		"kubernetes.io/cluster-service": "true",
		"kubernetes.io/name":            "CoreDNS",
	}
	_, err := cs.CoreV1().Services(metav1.NamespaceSystem).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: KubeDNSServiceName, Namespace: metav1.NamespaceSystem, Labels: labels},
		Spec: corev1.ServiceSpec{
			ClusterIP: DNSServiceIP,
			Selector:  map[string]string{"k8s-app": "kube-dns"},
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9153)},
			},
		},
	}, metav1.CreateOptions{})
	return ignoreExists(err)
}
