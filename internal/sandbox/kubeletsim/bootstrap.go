package kubeletsim

import (
	"context"
	"crypto"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

// Files the kubelet keeps in --cert-dir, as certificate.NewFileStore names them.
const (
	clientCertCurrent = "kubelet-client-current.pem"
	tmpPrivateKeyFile = "kubelet-client.key.tmp"
)

// Timings of pkg/kubelet/certificate/bootstrap.
var (
	waitForServerDeadline = time.Minute
	waitForServerPeriod   = 2 * time.Second
	certificateWait       = time.Hour
)

// loadKubeconfig reads a kubeconfig from the host and builds a client
// configuration, resolving every referenced file (CA, certificate, key,
// token file) on the host, as clientcmd does on Windows.
func loadKubeconfig(files FileSystem, path string) (*rest.Config, *clientcmdapi.Config, error) {
	data, err := files.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("CreateFile %s: The system cannot find the file specified.", path)
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, nil, fmt.Errorf("error loading config file %q: %w", path, err)
	}
	ctxName := kc.CurrentContext
	kctx, ok := kc.Contexts[ctxName]
	if !ok || ctxName == "" {
		return nil, nil, fmt.Errorf("invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable")
	}
	cluster, ok := kc.Clusters[kctx.Cluster]
	if !ok {
		return nil, nil, fmt.Errorf("invalid configuration: context was not found for specified context: %s", ctxName)
	}
	if cluster.Server == "" {
		return nil, nil, fmt.Errorf("invalid configuration: no server found for cluster %q", kctx.Cluster)
	}
	cfg := &rest.Config{Host: cluster.Server}
	cfg.TLSClientConfig.Insecure = cluster.InsecureSkipTLSVerify
	cfg.TLSClientConfig.ServerName = cluster.TLSServerName
	cfg.TLSClientConfig.CAData = cluster.CertificateAuthorityData
	if cluster.CertificateAuthority != "" && len(cfg.TLSClientConfig.CAData) == 0 {
		ca, err := files.ReadFile(cluster.CertificateAuthority)
		if err != nil {
			return nil, nil, fmt.Errorf("invalid configuration: unable to read certificate-authority %s for %s due to open %s: The system cannot find the file specified.", cluster.CertificateAuthority, kctx.Cluster, cluster.CertificateAuthority)
		}
		cfg.TLSClientConfig.CAData = ca
	}
	if auth, ok := kc.AuthInfos[kctx.AuthInfo]; ok {
		cfg.BearerToken = auth.Token
		if auth.TokenFile != "" && cfg.BearerToken == "" {
			tok, err := files.ReadFile(auth.TokenFile)
			if err != nil {
				return nil, nil, fmt.Errorf("invalid configuration: unable to read token file %s: %w", auth.TokenFile, err)
			}
			cfg.BearerToken = strings.TrimSpace(string(tok))
		}
		cfg.TLSClientConfig.CertData = auth.ClientCertificateData
		cfg.TLSClientConfig.KeyData = auth.ClientKeyData
		if auth.ClientCertificate != "" && len(cfg.TLSClientConfig.CertData) == 0 {
			b, err := files.ReadFile(auth.ClientCertificate)
			if err != nil {
				return nil, nil, fmt.Errorf("invalid configuration: unable to read client-cert %s for %s due to open %s: The system cannot find the file specified.", auth.ClientCertificate, kctx.AuthInfo, auth.ClientCertificate)
			}
			cfg.TLSClientConfig.CertData = b
		}
		if auth.ClientKey != "" && len(cfg.TLSClientConfig.KeyData) == 0 {
			b, err := files.ReadFile(auth.ClientKey)
			if err != nil {
				return nil, nil, fmt.Errorf("invalid configuration: unable to read client-key %s for %s due to open %s: The system cannot find the file specified.", auth.ClientKey, kctx.AuthInfo, auth.ClientKey)
			}
			cfg.TLSClientConfig.KeyData = b
		}
	}
	return cfg, kc, nil
}

// validClientConfig is isClientConfigStillValid: the kubeconfig exists and
// holds a client certificate that has not expired.
func validClientConfig(files FileSystem, path string, log *logger) (*rest.Config, bool) {
	if _, err := files.ReadFile(path); err != nil {
		return nil, false
	}
	cfg, _, err := loadKubeconfig(files, path)
	if err != nil {
		log.Error("bootstrap.go:250", err, "Unable to read existing bootstrap client config", "path", path)
		return nil, false
	}
	certs, err := certutil.ParseCertsPEM(cfg.TLSClientConfig.CertData)
	if err != nil || len(certs) == 0 {
		log.Error("bootstrap.go:262", fmt.Errorf("unable to load TLS certificates from existing bootstrap client config read from %s: %v", path, err), "Unable to use existing kubeconfig")
		return nil, false
	}
	now := time.Now()
	for _, c := range certs {
		if now.After(c.NotAfter) {
			log.Error("bootstrap.go:273", fmt.Errorf("part of the existing bootstrap client certificate in %s is expired: %v", path, c.NotAfter), "Unable to use existing kubeconfig")
			return nil, false
		}
	}
	return cfg, true
}

// loadClientCert is bootstrap.LoadClientCert: with a valid --kubeconfig it
// does nothing; otherwise it requests a node client certificate with the
// --bootstrap-kubeconfig credentials, stores it in --cert-dir and writes
// --kubeconfig pointing at it.
func (k *Kubelet) loadClientCert(ctx context.Context) error {
	f, log, files := k.flags, k.log, k.cfg.Files
	if _, ok := validClientConfig(files, f.Kubeconfig, log); ok {
		log.Info("bootstrap.go:119", "Kubeconfig exists and is valid, skipping bootstrap", "path", f.Kubeconfig)
		return nil
	}
	if f.BootstrapKubeconfig == "" {
		return fmt.Errorf("unable to load kubeconfig: %s", mustKubeconfigError(files, f.Kubeconfig))
	}
	log.Info("bootstrap.go:123", "Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file")
	bootCfg, _, err := loadKubeconfig(files, f.BootstrapKubeconfig)
	if err != nil {
		return fmt.Errorf("unable to load bootstrap kubeconfig: %w", err)
	}
	bootClient, err := kubernetes.NewForConfig(userAgent(bootCfg, k.version))
	if err != nil {
		return fmt.Errorf("unable to create certificates signing request client: %w", err)
	}

	// The private key survives a failed attempt, so a retry asks for the
	// same CSR name.
	keyPath := joinWin(f.CertDir, tmpPrivateKeyFile)
	keyPEM, err := files.ReadFile(keyPath)
	if err != nil || !validKey(keyPEM) {
		log.Info("bootstrap.go:145", "No valid private key and/or certificate found, reusing existing private key or creating a new one")
		if keyPEM, err = keyutil.MakeEllipticPrivateKeyPEM(); err != nil {
			return err
		}
		if err := files.WriteFile(keyPath, keyPEM); err != nil {
			return fmt.Errorf("error writing key to %s: %w", keyPath, err)
		}
	}

	if err := k.waitForServer(ctx, bootCfg); err != nil {
		log.Info("bootstrap.go:157", "Error waiting for apiserver to come up", "err", err)
	}
	certPEM, err := k.requestNodeCertificate(ctx, bootClient, keyPEM)
	if err != nil {
		return err
	}
	pemBundle := append(append([]byte{}, certPEM...), keyPEM...)
	stamped := joinWin(f.CertDir, "kubelet-client-"+time.Now().Format("2006-01-02-15-04-05")+".pem")
	current := joinWin(f.CertDir, clientCertCurrent)
	for _, p := range []string{stamped, current} {
		if err := files.WriteFile(p, pemBundle); err != nil {
			return fmt.Errorf("could not write certificate %s: %w", p, err)
		}
	}
	log.Info("certificate_store.go:130", "Loading cert/key pair from a file", "filePath", current)
	return k.writeKubeconfigFromBootstrapping(bootCfg, current)
}

func mustKubeconfigError(files FileSystem, path string) error {
	if path == "" {
		return errors.New("invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable")
	}
	_, _, err := loadKubeconfig(files, path)
	if err == nil {
		err = fmt.Errorf("the kubeconfig %s holds no valid client certificate", path)
	}
	return err
}

func validKey(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	_, err := keyutil.ParsePrivateKeyPEM(b)
	return err == nil
}

// waitForServer polls /healthz with the bootstrap credentials, as the
// kubelet does before it sends its CSR.
func (k *Kubelet) waitForServer(ctx context.Context, cfg *rest.Config) error {
	c := rest.CopyConfig(cfg)
	c.Timeout = time.Second
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return fmt.Errorf("couldn't create client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, waitForServerDeadline)
	defer cancel()
	connected := false
	wait.JitterUntil(func() {
		if _, err := cs.Discovery().RESTClient().Get().AbsPath("/healthz").Do(ctx).Raw(); err != nil {
			k.log.Info("bootstrap.go:297", "Failed to connect to apiserver", "err", err)
			return
		}
		connected = true
		cancel()
	}, waitForServerPeriod, 0.2, true, ctx.Done())
	if !connected {
		return errors.New("timed out waiting to connect to apiserver")
	}
	return nil
}

// requestNodeCertificate creates the CSR a kubelet sends (signer
// kubernetes.io/kube-apiserver-client-kubelet, CN system:node:<name>,
// O system:nodes) and waits for the controller manager to approve and sign it.
func (k *Kubelet) requestNodeCertificate(ctx context.Context, client kubernetes.Interface, keyPEM []byte) ([]byte, error) {
	subject := &pkix.Name{Organization: []string{"system:nodes"}, CommonName: "system:node:" + k.nodeName}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("invalid private key for certificate request: %w", err)
	}
	csrData, err := certutil.MakeCSR(key, subject, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("unable to generate certificate request: %w", err)
	}
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("private key does not implement crypto.Signer")
	}
	name, err := digestedName(signer.Public(), subject, usages)
	if err != nil {
		return nil, err
	}
	reqName, reqUID, err := csr.RequestCertificateWithContext(ctx, client, csrData, name, certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
	if err != nil {
		return nil, err
	}
	k.log.Info("csr.go:261", "Certificate signing request created", "csr", reqName)
	ctx, cancel := context.WithTimeout(ctx, certificateWait)
	defer cancel()
	k.log.Info("bootstrap.go:359", "Waiting for client certificate to be issued")
	return csr.WaitForCertificate(ctx, client, reqName, reqUID)
}

// digestedName names the CSR after its content, so that retries with the
// same key reuse it (bootstrap.digestedName).
func digestedName(publicKey any, subject *pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	hash := sha512.New512_256()
	const delimiter = '|'
	encode := base64.RawURLEncoding.EncodeToString
	write := func(data []byte) {
		hash.Write([]byte(encode(data)))
		hash.Write([]byte{delimiter})
	}
	der, err := x509.MarshalPKIXPublicKey(publicKey)
	if err != nil {
		return "", err
	}
	write(der)
	write([]byte(subject.CommonName))
	for _, v := range subject.Organization {
		write([]byte(v))
	}
	for _, v := range usages {
		write([]byte(v))
	}
	return "node-csr-" + encode(hash.Sum(nil)), nil
}

// writeKubeconfigFromBootstrapping writes --kubeconfig: the bootstrap
// cluster stanza with the new client certificate.
func (k *Kubelet) writeKubeconfigFromBootstrapping(boot *rest.Config, pemPath string) error {
	bootRaw, _ := k.cfg.Files.ReadFile(k.flags.BootstrapKubeconfig)
	caFile := ""
	if bk, err := clientcmd.Load(bootRaw); err == nil {
		if c, ok := bk.Contexts[bk.CurrentContext]; ok {
			if cl, ok := bk.Clusters[c.Cluster]; ok && len(cl.CertificateAuthorityData) == 0 {
				caFile = cl.CertificateAuthority
			}
		}
	}
	cluster := &clientcmdapi.Cluster{Server: boot.Host, InsecureSkipTLSVerify: boot.TLSClientConfig.Insecure}
	if caFile != "" {
		cluster.CertificateAuthority = caFile
	} else {
		cluster.CertificateAuthorityData = boot.TLSClientConfig.CAData
	}
	out := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"default-cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts:       map[string]*clientcmdapi.Context{"default-context": {Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default"}},
		CurrentContext: "default-context",
	}
	data, err := clientcmd.Write(out)
	if err != nil {
		return err
	}
	return k.cfg.Files.WriteFile(k.flags.Kubeconfig, data)
}

func userAgent(cfg *rest.Config, version string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = "kubelet/" + version + " (windows/amd64) kubernetes/simulated"
	return c
}

// joinWin joins a Windows directory and a file name.
func joinWin(dir, name string) string {
	return strings.TrimRight(dir, `\/`) + `\` + name
}
