package kubeletsim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// TestIISPods: seed 000's IIS container is recognised by its image and its
// own entrypoint, pulled by tag as the sandbox serves it, and serves IIS's
// start page on the pod's port 80, reached through the host's pod network
// (from its own pods and through Dataplanes from the overlay) only while the
// host's HNS network exists; another port is refused.
func TestIISPods(t *testing.T) {
	iis := func(image string, cmd ...string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "iis-server", Image: image, Command: cmd}}}}
	}
	for image, want := range map[string]bool{
		"mcr.microsoft.com/windows/servercore/iis":                            true,
		"mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022": true,
		"mcr.microsoft.com/windows/servercore/iisx":                           false,
		"mcr.microsoft.com/windows/servercore:ltsc2022":                       false,
	} {
		if got := isIISPod(iis(image)); got != want {
			t.Errorf("isIISPod(%s) = %v, want %v", image, got, want)
		}
	}
	if isIISPod(iis("mcr.microsoft.com/windows/servercore/iis", "powershell.exe")) {
		t.Error("an IIS pod with its own command is modelled as IIS")
	}
	if id, err := pullImage("mcr.microsoft.com/windows/servercore/iis"); err != nil || !strings.HasPrefix(id, iisRepository+"@sha256:") {
		t.Errorf("pulling IIS latest: %q, %v", id, err)
	}
	if _, err := pullImage("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019"); err == nil {
		t.Error("an IIS tag the sandbox does not serve was pulled")
	}

	files := memFiles{}
	const hostDir, podIP = "/hosts/TEST-IIS", "10.244.64.5"
	pn := &podNet{files: files, host: hostDir, podCIDR: netip.MustParsePrefix("10.244.64.0/26")}
	dst := netip.AddrPortFrom(netip.MustParseAddr(podIP), 80)
	site, err := startIISSite("uid-1")
	if err != nil {
		t.Fatal(err)
	}
	iisSites.Store(iisKey(hostDir, podIP), site)
	t.Cleanup(func() { iisSites.Delete(iisKey(hostDir, podIP)); _ = site.srv.Close() })

	if _, err := pn.deliver(t.Context(), "tcp", dst); err == nil || !strings.Contains(err.Error(), "no HNS network") {
		t.Errorf("delivered without an HNS network: %v", err)
	}
	if err := winsim.PutHNSNetwork(files, winsim.HNSNetwork{Name: CalicoNetworkName, Type: "Overlay", AddressPrefix: "10.244.64.0/26", VNI: 4096}); err != nil {
		t.Fatal(err)
	}
	get := func(dial func() (io.ReadWriteCloser, error)) (int, http.Header, string) {
		t.Helper()
		c, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: iis\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}
	// From a pod of the host: its own pod network.
	code, header, body := get(func() (io.ReadWriteCloser, error) { return pn.dial(t.Context(), "tcp", dst) })
	if code != http.StatusOK || header.Get("Server") != "Microsoft-IIS/10.0" || !strings.Contains(body, "<title>IIS Windows Server</title>") {
		t.Errorf("GET / from the host's pod: %d %v\n%s", code, header, body)
	}
	// From the overlay: the node whose pod network holds the address.
	d := NewDataplanes()
	n := &nodeAgent{podNetwork: pn}
	d.add(n)
	if code, _, _ := get(func() (io.ReadWriteCloser, error) { return d.Dial(t.Context(), "tcp", dst) }); code != http.StatusOK {
		t.Errorf("GET / through Dataplanes: %d", code)
	}
	if _, err := d.Dial(t.Context(), "tcp", netip.MustParseAddrPort(podIP+":8080")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("port 8080 of the IIS pod: %v, want connection refused", err)
	}
	if _, err := d.Dial(t.Context(), "tcp", netip.MustParseAddrPort("10.244.65.5:80")); !errors.Is(err, ErrNoWindowsPod) {
		t.Errorf("an address no node holds: %v", err)
	}
	d.remove(n)
	if _, err := d.Dial(t.Context(), "tcp", dst); !errors.Is(err, ErrNoWindowsPod) {
		t.Errorf("a stopped kubelet's node still delivers: %v", err)
	}
}
