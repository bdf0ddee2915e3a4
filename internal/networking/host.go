package networking

// Paths on the Windows host that the golden image, the join and the modes'
// agents agree on. A mode's own programs and files are in its file.
const (
	// CNIBinDir holds the CNI plugins containerd runs (the golden image
	// extracts containernetworking/plugins there).
	CNIBinDir = `C:\opt\cni\bin`
	// CNIConfDir is where containerd reads CNI configuration lists from.
	CNIConfDir = `C:\etc\cni\net.d`
	// KubeProxyExe is kube-proxy, installed by every golden image.
	KubeProxyExe = `C:\k\kube-proxy.exe`
)

// Windows' overlay networking (HNS) accepts VXLAN only with these values,
// so an overlay that Windows nodes join must use them cluster-wide.
const (
	WindowsVXLANVNI  = 4096
	WindowsVXLANPort = 4789
)
