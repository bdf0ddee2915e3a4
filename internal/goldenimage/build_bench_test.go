package goldenimage_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/goldenimage"
	"github.com/wincluster/terraform-provider-windows/internal/guest"
	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/sandboxtest"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// The sandbox is started by the first benchmark that needs it
// (sandboxtest.Shared) and stopped by TestMain, so `go test` without -bench
// starts nothing, and the testing package's repeated calls of a benchmark
// (b.N = 1, then the real N) share it.
func TestMain(m *testing.M) { sandboxtest.Main(m) }

// startSandbox is the package's sandbox, started once (building the control
// plane first if SANDBOX_CONTROLPLANE_BIN is unset and nothing is cached:
// minutes, once).
func startSandbox(b *testing.B) *sandbox.Sandbox {
	b.Helper()
	// The build runs native programs (containerd.exe --register-service, tar.exe, ctr.exe).
	return sandboxtest.Shared(b)
}

var benchSeq atomic.Int64

// BenchmarkBuildGoldenImage builds a Windows Server 2022 golden image in the
// sandbox per iteration, as windows_golden_image's Create does: clone, power
// on, wait for the IP, WinRM over HTTPS with NTLM, every image step (the
// Containers feature's reboot included), sysprep, wait for power-off, mark as
// template. The template is deleted outside the timed part.
//
// ns/op is one whole build. In the sandbox it is dominated by the simulated
// guest's reboot downtime (winsim's RebootDelay, 2 s), reported on its own as
// reboot-ms/op; the rest is the provider's own work and the round trips.
//
// Custom metrics, per build:
//   - scripts/op: Result.RoundTrips, the scripts Build ran (one Transport.Run
//     each: the image steps and sysprep).
//   - guest-cmds/op: the command lines the simulated host recorded in its
//     scripts.log: the scripts above plus the trivial command remote.Connect
//     proves each session with (once per connection: before and after the
//     reboot), plus any chunked uploads a long script needs.
//   - http-reqs/op: WinRM HTTP requests (POST /wsman), counted on the wire by a
//     TLS-terminating proxy between the client and the host: the NTLM
//     handshake of every connection (2 each), and per command the WS-Management
//     Create (shell), Command, Receive (until done), Signal and Delete. This
//     is what a build costs in latency over a slow link: multiply by the RTT.
func BenchmarkBuildGoldenImage(b *testing.B) {
	sb := startSandbox(b)
	ctx := context.Background()
	vc, err := vsphere.NewClient(ctx, vsphere.Config{
		Server: sb.VSphere.Server, User: sb.VSphere.User, Password: sb.VSphere.Password, CAFile: sb.CAFile,
	})
	if err != nil {
		b.Fatal(err)
	}
	vs := goldenimage.NewVSphere(vc)
	var requests atomic.Int64
	connect := countingConnector(sb, &requests)

	var scripts, guestCmds int
	var reboot time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A unique VM name (and so computer name, its first 15 characters).
		name := fmt.Sprintf("bench-gi-%d", benchSeq.Add(1))
		req := benchRequest(sb, name)
		var hostDir string
		var rebootStart time.Time
		req.Progress = func(stage string, fields map[string]any) {
			switch {
			case stage == "connect" && hostDir == "":
				if h := sb.Hosts.ByIP(fmt.Sprint(fields["host"])); h != nil {
					hostDir = h.Dir()
				}
			case stage == "reboot":
				rebootStart = time.Now()
			case !rebootStart.IsZero():
				reboot += time.Since(rebootStart)
				rebootStart = time.Time{}
			}
		}
		bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		res, err := goldenimage.Build(bctx, vs, connect, req)
		cancel()
		if err != nil {
			b.Fatalf("building %s: %v", name, err)
		}

		b.StopTimer()
		scripts += res.RoundTrips
		n, err := countScriptLog(filepath.Join(hostDir, "scripts.log"))
		if err != nil {
			b.Fatal(err)
		}
		guestCmds += n
		if err := goldenimage.DeleteTemplate(ctx, vc, res.Template.ID); err != nil {
			b.Fatalf("deleting %s: %v", res.Template.Path, err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	perOp := func(v float64) float64 { return v / float64(b.N) }
	b.ReportMetric(perOp(float64(scripts)), "scripts/op")
	b.ReportMetric(perOp(float64(guestCmds)), "guest-cmds/op")
	b.ReportMetric(perOp(float64(requests.Load())), "http-reqs/op")
	b.ReportMetric(perOp(float64(reboot.Milliseconds())), "reboot-ms/op")
}

// benchRequest is what windows_golden_image sends for a 2022 image built
// from the sandbox's base template and artifact server.
func benchRequest(sb *sandbox.Sandbox, name string) goldenimage.Request {
	a, vc := sb.Artifacts, sb.VSphere
	version := "v1.36.3"
	return goldenimage.Request{
		Clone: goldenimage.CloneRequest{
			Source: vc.Templates["2022"], Name: name, Folder: vc.Folder,
			ResourcePoolID: vc.ResourcePoolID, DatastoreID: vc.DatastoreID, NetworkID: vc.NetworkID,
		},
		Transport: remote.Config{
			Protocol: remote.ProtocolWinRM, Port: sb.Hosts.Ports().WinRMHTTPS, HTTPS: true, NTLM: true,
			CACertPEM: sb.CA.CertPEM, User: "Administrator", Password: sb.AdminPassword,
		},
		Image: bootstrap.ImageConfig{
			KubernetesVersion: version,
			Containerd: bootstrap.Artifact{Name: "containerd", URL: a.Containerd.URL, SHA256: a.Containerd.SHA256,
				Path: bootstrap.DownloadPath(a.Containerd.URL), ExtractTo: bootstrap.ContainerdDir},
			Kubelet: bootstrap.Artifact{Name: "kubelet", URL: bootstrap.KubernetesArtifactURL(a.BaseURL, version, "kubelet.exe"),
				SHA256: a.Kubelet.SHA256, Path: bootstrap.KubeletExe},
			KubeProxy: bootstrap.Artifact{Name: "kube-proxy", URL: bootstrap.KubernetesArtifactURL(a.BaseURL, version, "kube-proxy.exe"),
				SHA256: a.KubeProxy.SHA256, Path: bootstrap.KubeProxyExe},
			KubeLogRunner: bootstrap.Artifact{Name: "kube-log-runner", URL: bootstrap.KubernetesArtifactURL(a.BaseURL, version, "kube-log-runner.exe"),
				SHA256: a.KubeLogRunner.SHA256, Path: bootstrap.KubeLogRunnerExe},
			CNIPlugins: bootstrap.Artifact{Name: "cni-plugins", URL: a.CNIPlugins.URL, SHA256: a.CNIPlugins.SHA256,
				Path: bootstrap.DownloadPath(a.CNIPlugins.URL), ExtractTo: bootstrap.CNIBinDir},
			PauseImage: bootstrap.DefaultPause,
		},
		Unattend: bootstrap.UnattendConfig{TimeZone: "UTC"},
	}
}

// countScriptLog counts the entries of a simulated host's scripts.log: one
// "=== <time> <transport> user=... exit=..." header per command line run.
func countScriptLog(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("the build host's script log: %w", err)
	}
	defer func() { _ = f.Close() }() // read only
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "=== ") {
			n++
		}
	}
	return n, sc.Err()
}

// countingConnector is remote.Connect through a wsmanProxy that counts the
// WinRM HTTP requests. The proxy goes away with the transport.
func countingConnector(sb *sandbox.Sandbox, requests *atomic.Int64) guest.Connector {
	return func(ctx context.Context, cfg remote.Config) (remote.Transport, error) {
		p, err := startWSManProxy(sb, net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), cfg.Host, requests)
		if err != nil {
			return nil, err
		}
		cfg.Host, cfg.Port = p.host, p.port
		t, err := remote.Connect(ctx, cfg)
		if err != nil {
			p.Close()
			return nil, err
		}
		return proxiedTransport{t, p}, nil
	}
}

type proxiedTransport struct {
	remote.Transport
	proxy *wsmanProxy
}

func (t proxiedTransport) Close() error {
	err := t.Transport.Close()
	t.proxy.Close()
	return err
}

// wsmanProxy relays WinRM over HTTPS to one host and counts the requests.
// It terminates the client's TLS with a certificate from the sandbox CA and
// opens one upstream TLS connection per client connection, so connections
// stay paired (NTLM authenticates a connection, not a request).
type wsmanProxy struct {
	host     string
	port     int
	ln       net.Listener
	upstream string
	upTLS    *tls.Config
	requests *atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startWSManProxy(sb *sandbox.Sandbox, upstream, serverName string, requests *atomic.Int64) (*wsmanProxy, error) {
	cert, err := sb.CA.ServingCertificate("127.0.0.1")
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	p := &wsmanProxy{
		host: "127.0.0.1", port: ln.Addr().(*net.TCPAddr).Port, ln: ln, upstream: upstream,
		upTLS:    &tls.Config{RootCAs: sb.CA.Pool(), ServerName: serverName, MinVersion: tls.VersionTLS12},
		requests: requests, conns: map[net.Conn]struct{}{},
	}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.relay(c) })
		}
	})
	return p, nil
}

func (p *wsmanProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *wsmanProxy) relay(client net.Conn) {
	p.track(client, true)
	defer p.track(client, false)
	defer func() { _ = client.Close() }() // the relay is over either way
	up, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", p.upstream, p.upTLS)
	if err != nil {
		return // the client sees the connection drop, as when the host is down
	}
	p.track(up, true)
	defer p.track(up, false)
	defer func() { _ = up.Close() }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(client, up)
		_ = client.Close()
	}()
	_, _ = io.Copy(up, io.TeeReader(client, &requestCounter{n: p.requests}))
	_ = up.Close()
	<-done
}

// Close stops the proxy and drops its connections.
func (p *wsmanProxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// requestCounter counts HTTP request lines in a client's byte stream. SOAP
// bodies carry scripts base64-encoded, so the request line cannot appear in
// them; tail keeps a line split across two writes countable.
type requestCounter struct {
	n    *atomic.Int64
	tail []byte
}

var requestLine = []byte("POST /wsman HTTP/1.1\r\n")

func (c *requestCounter) Write(p []byte) (int, error) {
	buf := append(c.tail, p...)
	c.n.Add(int64(bytes.Count(buf, requestLine)))
	if keep := len(requestLine) - 1; len(buf) > keep {
		buf = buf[len(buf)-keep:]
	}
	c.tail = append([]byte(nil), buf...)
	return len(p), nil
}
