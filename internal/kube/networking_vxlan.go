package kube

// ModeVXLAN is the VXLAN network identifier and UDP port of a networking
// mode's overlay: Windows' for flannel, zero for a mode that runs none.
func ModeVXLAN(mode string) (vni, port int) {
	if mode == NetworkingFlannel {
		return WindowsVXLANVNI, WindowsVXLANPort
	}
	return 0, 0
}
