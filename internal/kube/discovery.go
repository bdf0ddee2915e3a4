package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/version"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// Well-known objects discovery reads. kubeadm creates the ConfigMaps; most
// distributions keep the kube-dns Service name for CoreDNS.
const (
	kubeadmConfigMap   = "kubeadm-config"
	kubeletConfigMap   = "kubelet-config"
	kubeDNSService     = "kube-dns"
	defaultServiceCIDR = "kubernetes" // the ServiceCIDR object the API server creates from --service-cluster-ip-range
	defaultDomain      = "cluster.local"
)

// ClusterNetwork is what a Windows node needs to know about the cluster's
// network before it joins: the kubelet's --cluster-dns and --cluster-domain,
// kube-proxy's and the CNI's service and cluster CIDRs.
type ClusterNetwork struct {
	// APIEndpoint is the API server URL the provider talks to.
	APIEndpoint string
	// ServerVersion is the API server's git version, for example "v1.36.3".
	ServerVersion string
	ServiceCIDRs  []string
	// ClusterCIDRs are the pod networks; nil when no source names them.
	ClusterCIDRs []string
	// DNSServiceIP is the cluster IP of the DNS Service; "" when none exists.
	DNSServiceIP  string
	ClusterDomain string
	// Sources says where each fact came from, for messages ("ServiceCIDR
	// kubernetes", "kube-system/kubeadm-config networking.podSubnet").
	Sources NetworkSources
}

// NetworkSources names the object (and key) each ClusterNetwork fact was
// read from; "" when the fact was not found.
type NetworkSources struct {
	ServiceCIDRs, ClusterCIDRs, DNSServiceIP, ClusterDomain string
}

// DiscoverNetwork reads the cluster's network settings, each from the most
// authoritative source that exists: live API objects first, then what
// kubeadm recorded, then the flags of static control-plane pods. A missing
// source is not an error; a fact no source names stays empty and its Source
// says so. Errors other than not-found and forbidden are returned.
func (c *Client) DiscoverNetwork(ctx context.Context) (*ClusterNetwork, error) {
	src, err := c.readNetworkSources(ctx)
	if err != nil {
		return nil, err
	}
	return src.network(c.Host()), nil
}

// networkSources holds every raw source the network facts are derived from,
// so the derivation is a pure function (and unit-tested without a cluster).
type networkSources struct {
	serverVersion string
	// serviceCIDRObject is spec.cidrs of the ServiceCIDR "kubernetes"; nil when absent.
	serviceCIDRObject []string
	kubeadm           *kubeadmClusterConfiguration
	kubelet           *kubeletConfiguration
	// plugin is the cluster's network plugin (networking.Detect).
	plugin            *networking.Plugin
	controllerManager map[string]string // flags of the kube-controller-manager static pod
	apiServer         map[string]string // flags of the kube-apiserver static pod
	dnsService        *corev1.Service
}

func (c *Client) readNetworkSources(ctx context.Context) (*networkSources, error) {
	src := &networkSources{}
	var err error
	if src.serverVersion, err = c.ServerVersion(ctx); err != nil {
		return nil, err
	}
	if src.serviceCIDRObject, err = c.serviceCIDRs(ctx); err != nil {
		return nil, err
	}
	if src.kubeadm, err = c.kubeadmConfig(ctx); err != nil {
		return nil, err
	}
	if src.kubelet, err = c.kubeletConfig(ctx); err != nil {
		return nil, err
	}
	if src.plugin, err = c.DetectCNI(ctx); err != nil {
		return nil, err
	}
	if src.controllerManager, err = c.staticPodFlags(ctx, "kube-controller-manager"); err != nil {
		return nil, err
	}
	if src.apiServer, err = c.staticPodFlags(ctx, "kube-apiserver"); err != nil {
		return nil, err
	}
	if src.dnsService, err = c.dnsService(ctx); err != nil {
		return nil, err
	}
	return src, nil
}

// network derives the facts. The sources are the cluster's objects, which
// anyone who may edit a kube-system ConfigMap or a static pod controls; the
// facts go into the node's kubelet configuration and CNI configuration, so a
// source whose value is not a well-formed CIDR, IP or DNS name is passed
// over as if it were absent.
func (s *networkSources) network(host string) *ClusterNetwork {
	n := &ClusterNetwork{APIEndpoint: host, ServerVersion: s.serverVersion}
	var kubeadm kubeadmClusterConfiguration
	if s.kubeadm != nil {
		kubeadm = *s.kubeadm
	}

	n.ServiceCIDRs, n.Sources.ServiceCIDRs = firstCIDRs(
		cidrSource{s.serviceCIDRObject, "ServiceCIDR " + defaultServiceCIDR},
		cidrSource{splitCIDRs(kubeadm.Networking.ServiceSubnet), "kube-system/kubeadm-config networking.serviceSubnet"},
		cidrSource{splitCIDRs(s.apiServer["service-cluster-ip-range"]), "kube-apiserver --service-cluster-ip-range"},
	)
	var plugin cidrSource
	if s.plugin != nil {
		plugin = cidrSource{s.plugin.PodNetworks, s.plugin.PodNetworksSource}
	}
	n.ClusterCIDRs, n.Sources.ClusterCIDRs = firstCIDRs(
		cidrSource{splitCIDRs(kubeadm.Networking.PodSubnet), "kube-system/kubeadm-config networking.podSubnet"},
		plugin,
		cidrSource{splitCIDRs(s.controllerManager["cluster-cidr"]), "kube-controller-manager --cluster-cidr"},
	)

	if svc := s.dnsService; svc != nil && net.ParseIP(svc.Spec.ClusterIP) != nil {
		n.DNSServiceIP, n.Sources.DNSServiceIP = svc.Spec.ClusterIP, "Service "+svc.Namespace+"/"+svc.Name
	}

	switch {
	case s.kubelet != nil && domain(s.kubelet.ClusterDomain):
		n.ClusterDomain, n.Sources.ClusterDomain = s.kubelet.ClusterDomain, "kube-system/kubelet-config clusterDomain"
	case domain(kubeadm.Networking.DNSDomain):
		n.ClusterDomain, n.Sources.ClusterDomain = kubeadm.Networking.DNSDomain, "kube-system/kubeadm-config networking.dnsDomain"
	default:
		n.ClusterDomain, n.Sources.ClusterDomain = defaultDomain, "default (no kubelet-config or kubeadm-config names one)"
	}
	return n
}

// cidrSource is one place a list of CIDRs may be read, and its name.
type cidrSource struct {
	list   []string
	source string
}

// firstCIDRs returns the first source, in the order given (most trusted
// first), whose list is well-formed; none: nil and "".
func firstCIDRs(sources ...cidrSource) ([]string, string) {
	for _, c := range sources {
		if cidrs(c.list) {
			return c.list, c.source
		}
	}
	return nil, ""
}

// cidrs reports a non-empty list of well-formed CIDRs.
func cidrs(list []string) bool {
	for _, c := range list {
		if _, _, err := net.ParseCIDR(c); err != nil {
			return false
		}
	}
	return len(list) > 0
}

// domain reports a well-formed cluster domain: a DNS-1123 subdomain, the
// suffix of every Service's DNS name.
func domain(d string) bool {
	return d != "" && len(validation.IsDNS1123Subdomain(d)) == 0
}

// ServerVersion returns the API server's git version ("v1.36.3"). It reads
// /version itself because the discovery client's ServerVersion takes no
// context.
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	rc := c.Discovery().RESTClient()
	if rc == nil { // discovery without HTTP (client-go's fake): ask it directly
		info, err := c.Discovery().ServerVersion()
		if err != nil {
			return "", fmt.Errorf("reading the API server version: %w", err)
		}
		return info.GitVersion, nil
	}
	body, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("reading the API server version: %w", err)
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("reading the API server version: decoding /version: %w", err)
	}
	return info.GitVersion, nil
}

// serviceCIDRs reads the default ServiceCIDR object, which exists from
// Kubernetes 1.33 (MultiCIDRServiceAllocator GA); older clusters answer 404.
func (c *Client) serviceCIDRs(ctx context.Context) ([]string, error) {
	obj, err := c.NetworkingV1().ServiceCIDRs().Get(ctx, defaultServiceCIDR, metav1.GetOptions{})
	if absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ServiceCIDR %s: %w", defaultServiceCIDR, err)
	}
	return obj.Spec.CIDRs, nil
}

// dnsService finds the cluster DNS Service: kube-system/kube-dns, else the
// first one labelled k8s-app=kube-dns (distributions that name it coredns).
func (c *Client) dnsService(ctx context.Context) (*corev1.Service, error) {
	svc, err := c.CoreV1().Services(metav1.NamespaceSystem).Get(ctx, kubeDNSService, metav1.GetOptions{})
	if err == nil {
		return svc, nil
	}
	if !absent(err) {
		return nil, fmt.Errorf("reading Service kube-system/%s: %w", kubeDNSService, err)
	}
	list, err := c.CoreV1().Services(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
	if absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing DNS Services in kube-system: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return &list.Items[0], nil
}

// staticPodFlags returns the --flags of a control-plane static pod
// (component=<name> in kube-system, as kubeadm labels them), or nil when the
// control plane does not run as pods (managed clusters, the sandbox).
func (c *Client) staticPodFlags(ctx context.Context, component string) (map[string]string, error) {
	pods, err := c.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=" + component})
	if absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s pods in kube-system: %w", component, err)
	}
	for _, p := range pods.Items {
		for _, ctr := range p.Spec.Containers {
			if flags := parseFlags(append(append([]string{}, ctr.Command...), ctr.Args...)); len(flags) > 0 {
				return flags, nil
			}
		}
	}
	return nil, nil
}

// parseFlags reads --name=value and --name value arguments; a bare --name is
// "true".
func parseFlags(args []string) map[string]string {
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !hasValue {
			value = "true"
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				value = args[i+1]
				i++
			}
		}
		flags[name] = value
	}
	return flags
}

// absent reports an object discovery may do without: missing, or hidden by
// RBAC from a user who may still manage nodes.
func absent(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err)
}

func splitCIDRs(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
