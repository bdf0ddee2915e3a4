package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// iisRepository is the IIS image the sandbox's container runtime runs in a
// (non-HostProcess) Windows pod, as seed 000's Deployment names it:
// Microsoft's IIS on Windows Server Core (microsoft/iis-docker
// windowsservercore-ltsc2022/Dockerfile: Add-WindowsFeature Web-Server,
// EXPOSE 80, ENTRYPOINT C:\ServiceMonitor.exe w3svc). Its container is IIS's
// Default Web Site: HTTP on port 80, serving C:\inetpub\wwwroot\iisstart.htm
// at /, with IIS 10's Server header. A pod that sets the container's command
// or args replaces ServiceMonitor and is not modelled as IIS (it runs as any
// other image's pod: Running, its command not run).
const iisRepository = "mcr.microsoft.com/windows/servercore/iis"

// iisPort is the Default Web Site's binding (http/*:80:).
const iisPort = 80

// isIISPod: every container of the pod runs IIS's own entrypoint.
func isIISPod(pod *corev1.Pod) bool {
	if pod.Spec.HostNetwork || len(pod.Spec.InitContainers) > 0 || len(pod.Spec.Containers) == 0 {
		return false
	}
	for _, c := range pod.Spec.Containers {
		if len(c.Command) > 0 || len(c.Args) > 0 {
			return false
		}
		if c.Image != iisRepository && !hasRepository(c.Image, iisRepository) {
			return false
		}
	}
	return true
}

func hasRepository(image, repo string) bool {
	return len(image) > len(repo) && image[:len(repo)] == repo && (image[len(repo)] == ':' || image[len(repo)] == '@')
}

// iisSite is one IIS container's web server: a real HTTP server on a
// loopback port standing for the pod's address and port 80.
type iisSite struct {
	uid  types.UID
	addr string // the real listener
	srv  *http.Server
}

// iisSites are the IIS containers running on each host, by the host's disk
// directory and the pod's address. Like containerd's containers they outlive
// a kubelet restart; they end with their pod.
var iisSites sync.Map // hostDir + "\x00" + podIP -> *iisSite

func iisKey(hostDir, podIP string) string { return hostDir + "\x00" + podIP }

// iisStartPage is what IIS 10's Default Web Site serves at /
// (C:\inetpub\wwwroot\iisstart.htm, its title "IIS Windows Server").
const iisStartPage = `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1" />
<title>IIS Windows Server</title>
</head>
<body>
<div id="container">
<a href="http://go.microsoft.com/fwlink/?linkid=66138&amp;clcid=0x409"><img src="iisstart.png" alt="IIS" width="960" height="600" /></a>
</div>
</body>
</html>
`

func startIISSite(uid types.UID) (*iisSite, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "Microsoft-IIS/10.0")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "405 - HTTP verb used to access this page is not allowed.", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(iisStartPage))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Server", "Microsoft-IIS/10.0")
		http.Error(w, "404 - File or directory not found.", http.StatusNotFound)
	})
	s := &iisSite{uid: uid, addr: ln.Addr().String(), srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// runIIS starts the pod's IIS container at its address and reports it
// Running and Ready, once the image is pulled as containerd pulls it.
func (w *podWorker) runIIS(ctx context.Context, pod *corev1.Pod, podIP string) error {
	ids, pulled, err := w.pullImages(ctx, pod, pod.Spec.Containers)
	if !pulled {
		return err
	}
	key := iisKey(w.n.k.cfg.Host.Disk, podIP)
	if cur, ok := iisSites.Load(key); !ok || cur.(*iisSite).uid != pod.UID {
		site, err := startIISSite(pod.UID)
		if err != nil {
			return err
		}
		if old, loaded := iisSites.Swap(key, site); loaded {
			_ = old.(*iisSite).srv.Close()
		}
	}
	st := runningStatus(pod, w.n.nodeIP(), podIP)
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].ImageID = ids[st.ContainerStatuses[i].Image]
	}
	updated := pod.DeepCopy()
	updated.Status = st
	_, err = w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		w.n.k.log.Info("kubelet.go:2530", "SyncLoop (PLEG): event for pod", "pod", pod.Namespace+"/"+pod.Name, "event", "ContainerStarted", "podIP", podIP)
	}
	return err
}

// stopIIS ends the pod's IIS container, if it ran one on this host.
func (w *podWorker) stopIIS(p *corev1.Pod) {
	if p.Status.PodIP == "" {
		return
	}
	key := iisKey(w.n.k.cfg.Host.Disk, p.Status.PodIP)
	if cur, ok := iisSites.Load(key); ok && cur.(*iisSite).uid == p.UID {
		if iisSites.CompareAndDelete(key, cur) {
			_ = cur.(*iisSite).srv.Close()
		}
	}
}

// deliver is the last hop of a packet to one of this host's pod addresses
// (from a pod on the host, or from the overlay): the host's HNS network
// must exist, and a container must listen on the address and port.
func (pn *podNet) deliver(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	if len(readHNS(pn.files)) == 0 {
		return nil, fmt.Errorf("deliver %s %s: the host has no HNS network (Get-HnsNetwork is empty): the packet is dropped", network, dst)
	}
	site, ok := iisSites.Load(iisKey(pn.host, dst.Addr().String()))
	if !ok || network != "tcp" || dst.Port() != iisPort {
		return nil, fmt.Errorf("deliver %s %s: nothing listens there (the sandbox's Windows pods that serve are IIS's, on tcp/%d): %w", network, dst, iisPort, syscall.ECONNREFUSED)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", site.(*iisSite).addr)
	if err != nil {
		return nil, fmt.Errorf("deliver %s %s: the IIS container: %w", network, dst, err)
	}
	return c, nil
}

// Dataplanes are the Windows nodes' ends of the overlay: a packet for a
// Windows pod's address (from the Linux node's pods, or another Windows
// node's) is delivered on the node whose pod network holds it. One per
// sandbox (HookOptions.Dataplanes).
type Dataplanes struct {
	mu    sync.Mutex
	nodes map[*nodeAgent]struct{}
}

// NewDataplanes returns an empty set.
func NewDataplanes() *Dataplanes { return &Dataplanes{nodes: map[*nodeAgent]struct{}{}} }

func (d *Dataplanes) add(n *nodeAgent) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.nodes[n] = struct{}{}
	d.mu.Unlock()
}

func (d *Dataplanes) remove(n *nodeAgent) {
	if d == nil {
		return
	}
	d.mu.Lock()
	delete(d.nodes, n)
	d.mu.Unlock()
}

// ErrNoWindowsPod: no running Windows node's pod network holds the address.
var ErrNoWindowsPod = errors.New("no Windows node's pod network holds the address")

// Dial delivers a connection to a Windows pod's address on the node whose
// pod network (flannel's pod CIDR, Calico's block) holds it.
func (d *Dataplanes) Dial(ctx context.Context, network string, dst netip.AddrPort) (net.Conn, error) {
	d.mu.Lock()
	var pn *podNet
	for n := range d.nodes {
		n.mu.Lock()
		if p := n.podNetwork; p != nil && p.podCIDR.IsValid() && p.podCIDR.Contains(dst.Addr()) {
			pn = p
		}
		n.mu.Unlock()
	}
	d.mu.Unlock()
	if pn == nil {
		return nil, fmt.Errorf("overlay %s %s: %w", network, dst, ErrNoWindowsPod)
	}
	return pn.deliver(ctx, network, dst)
}
