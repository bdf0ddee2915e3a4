package controlplane

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/pki"
)

// ContextName is the context (and cluster) name in the admin kubeconfig.
const ContextName = "sandbox"

// kubeconfig returns a self-contained kubeconfig (certificates embedded) for
// the client certificate in pair.
func kubeconfig(server string, caPEM []byte, user string, pair pki.Pair) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.CertPEM, ClientKeyData: pair.KeyPEM}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user}
	cfg.CurrentContext = ContextName
	return cfg
}

func writeKubeconfig(path string, cfg *clientcmdapi.Config) error {
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// restConfig returns a client configuration for the client certificate in pair.
func restConfig(server string, caPEM []byte, pair pki.Pair) *rest.Config {
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: caPEM, CertData: pair.CertPEM, KeyData: pair.KeyPEM,
		},
		// The sandbox serves tests that create many objects at once; the
		// client-side default (5 QPS) would throttle them, not the server.
		QPS:   100,
		Burst: 200,
	}
}

// clusterInfoKubeconfig is the kube-public/cluster-info content: the server and
// CA only, with kubeadm's empty cluster name, which kubelets and `kubeadm join`
// read anonymously (and the bootstrap signer signs) for discovery.
func clusterInfoKubeconfig(server string, caPEM []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding cluster-info kubeconfig: %w", err)
	}
	return data, nil
}
