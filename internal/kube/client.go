package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FieldManager is the server-side apply field manager (and user agent) of
// every change this provider makes, so `kubectl get -o yaml --show-managed-fields`
// tells which fields are ours.
const FieldManager = "terraform-provider-windows"

// connectTimeout bounds the first request that proves the endpoint and the
// credentials, so a wrong address fails in seconds instead of hanging.
const connectTimeout = 15 * time.Second

// Config is how to reach the cluster. Field names follow the hashicorp/kubernetes
// provider; explicit fields override what the kubeconfig file says.
type Config struct {
	ConfigPaths          []string // kubeconfig files, merged in order
	ConfigContext        string
	Host                 string
	Token                string
	ClientCertificate    string // PEM
	ClientKey            string // PEM
	ClusterCACertificate string // PEM
	Insecure             bool
	// Exec, when set, is a credential plugin (kubernetes.exec) that
	// client-go runs for the credentials, again whenever they expire or the
	// API server answers 401. It replaces any other credentials: Token,
	// ClientCertificate/ClientKey and the kubeconfig user's.
	Exec *Exec
}

// IsZero reports whether no way to reach a cluster was configured.
func (c Config) IsZero() bool {
	return len(c.ConfigPaths) == 0 && c.Host == ""
}

// Client is a Kubernetes clientset plus the settings it was made from.
type Client struct {
	kubernetes.Interface
	REST *rest.Config
	// Dynamic reads custom resources (a networking mode's detection); nil
	// makes one from REST when needed.
	Dynamic dynamic.Interface
}

// Host is the API server URL the client talks to.
func (c *Client) Host() string { return c.REST.Host }

// ClusterCA is the CA certificate (PEM) the client trusts for the API
// server, which a joining node's kubelet then trusts too. An insecure
// connection has none, and cannot bootstrap a node.
func (c *Client) ClusterCA() ([]byte, error) {
	if len(c.REST.TLSClientConfig.CAData) > 0 {
		return c.REST.TLSClientConfig.CAData, nil
	}
	if f := c.REST.TLSClientConfig.CAFile; f != "" {
		return os.ReadFile(f)
	}
	return nil, errors.New("the provider's Kubernetes settings carry no cluster CA certificate to give the node: set kubernetes.cluster_ca_certificate (an insecure connection cannot bootstrap a node)")
}

// NewClient builds a client from cfg and proves it with one authenticated
// request (a SelfSubjectReview), so that a wrong address, CA or credential
// surfaces as one clear error naming the endpoint.
func NewClient(ctx context.Context, cfg Config) (*Client, error) {
	restConfig, err := cfg.restConfig()
	if err != nil {
		return nil, err
	}
	restConfig.UserAgent = FieldManager
	// Terraform drives many resources at once through this one client, and a
	// client-side token bucket (client-go's default is 5 QPS, burst 10,
	// rest/config.go; even 50 QPS measured 10 s of a 20-node apply's 10.2 s
	// node phase spent waiting) only queues requests the API server would
	// serve in milliseconds. The server's own API Priority and Fairness (GA
	// since 1.29) protects it: SIG API Machinery's advice, which
	// controller-runtime follows by disabling its client-side limiter by
	// default (kubernetes-sigs/controller-runtime#3119). kubectl's 50 QPS,
	// burst 300 are for discovery only (WithDiscoveryQPS in kubectl's
	// pkg/cmd/cmd.go). No client limit, deliberately.
	restConfig.QPS = -1
	restConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper { return forbiddenTransport{next: rt} })
	cs, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("creating a Kubernetes client for %s: %w", restConfig.Host, err)
	}
	c := &Client{Interface: cs, REST: restConfig}
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	_, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	host := c.REST.Host
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case c.REST.ExecProvider != nil && isExecFailure(err):
		return execError(ctx, c.REST.ExecProvider, err)
	case apierrors.IsUnauthorized(err) && c.REST.ExecProvider != nil:
		return fmt.Errorf("the Kubernetes API server at %s rejected the credentials of the credential plugin %s (401 Unauthorized): check kubernetes.exec (its args and env name the right cluster, account or role) and that the plugin's user is allowed into the cluster", host, c.REST.ExecProvider.Command)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the Kubernetes API server at %s rejected the credentials (401 Unauthorized): check kubernetes.token, client_certificate/client_key or the user of the kubeconfig context", host)
	case apierrors.IsForbidden(err):
		// Authenticated but not allowed to review itself: the credentials work.
		return nil
	case strings.Contains(err.Error(), "x509:") || strings.Contains(err.Error(), "certificate"):
		return fmt.Errorf("cannot verify the TLS certificate of the Kubernetes API server at %s: %v; set kubernetes.cluster_ca_certificate to the cluster's CA (or, for a throwaway cluster only, insecure = true)", host, rootCause(err))
	case errors.As(err, &netErr) || errors.As(err, &urlErr):
		return fmt.Errorf("cannot reach the Kubernetes API server at %s: %v; check kubernetes.host (or the kubeconfig's server), that the API server is running and that the network allows the connection", host, rootCause(err))
	default:
		return fmt.Errorf("checking the Kubernetes API server at %s: %w", host, err)
	}
}

// rootCause strips url.Error's "Post \"https://...\":" prefix, which repeats
// the endpoint the message already names.
func rootCause(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}

func (cfg Config) restConfig() (*rest.Config, error) {
	if cfg.IsZero() {
		return nil, errors.New("no Kubernetes cluster is configured: set kubernetes.config_path (or KUBECONFIG / KUBE_CONFIG_PATH), or kubernetes.host with credentials (or KUBE_HOST)")
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: cfg.ConfigContext}
	if cfg.Host != "" {
		overrides.ClusterInfo.Server = cfg.Host
	}
	if cfg.ClusterCACertificate != "" {
		overrides.ClusterInfo.CertificateAuthorityData = []byte(cfg.ClusterCACertificate)
	}
	if cfg.Insecure {
		overrides.ClusterInfo.InsecureSkipTLSVerify = true
	}
	if cfg.Exec == nil {
		if cfg.Token != "" {
			overrides.AuthInfo.Token = cfg.Token
		}
		if cfg.ClientCertificate != "" {
			overrides.AuthInfo.ClientCertificateData = []byte(cfg.ClientCertificate)
		}
		if cfg.ClientKey != "" {
			overrides.AuthInfo.ClientKeyData = []byte(cfg.ClientKey)
		}
	}

	var loader clientcmd.ClientConfigLoader
	if len(cfg.ConfigPaths) > 0 {
		paths := make([]string, 0, len(cfg.ConfigPaths))
		for _, p := range cfg.ConfigPaths {
			paths = append(paths, expandHome(p))
		}
		// clientcmd skips files that do not exist while merging; when none
		// does, its error ("no configuration has been provided, try setting
		// KUBERNETES_MASTER") points nowhere useful, so say which files.
		if !anyExists(paths) {
			return nil, fmt.Errorf("no kubeconfig file found at %s: set kubernetes.config_path (or config_paths, "+
				"KUBE_CONFIG_PATH(S), KUBECONFIG) to an existing kubeconfig file", strings.Join(paths, ", "))
		}
		loader = &clientcmd.ClientConfigLoadingRules{Precedence: paths}
	} else {
		// Only explicit settings: start from an empty kubeconfig rather than
		// reading ~/.kube/config behind the user's back.
		loader = clientcmd.NewDefaultClientConfigLoadingRules()
		loader = &emptyLoader{ClientConfigLoader: loader}
	}
	restConfig, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loader, overrides).ClientConfig()
	if err != nil {
		where := "the kubernetes block"
		if len(cfg.ConfigPaths) > 0 {
			where = "kubeconfig " + strings.Join(cfg.ConfigPaths, string(filepath.ListSeparator))
		}
		return nil, fmt.Errorf("reading Kubernetes settings from %s: %w", where, err)
	}
	if cfg.Exec != nil {
		useExec(restConfig, cfg.Exec)
	}
	return restConfig, nil
}

// emptyLoader loads no files: used when the configuration is given field by field.
type emptyLoader struct{ clientcmd.ClientConfigLoader }

func (emptyLoader) Load() (*clientcmdapi.Config, error) { return clientcmdapi.NewConfig(), nil }

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := homeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	return p
}

// anyExists reports whether any of the paths names an existing file.
func anyExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
