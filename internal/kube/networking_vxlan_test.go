package kube

import "testing"

func TestModeVXLAN(t *testing.T) {
	if vni, port := ModeVXLAN(NetworkingFlannel); vni != 4096 || port != 4789 {
		t.Errorf("flannel: VNI %d, port %d; Windows accepts only 4096 and 4789", vni, port)
	}
	if vni, port := ModeVXLAN(NetworkingNone); vni != 0 || port != 0 {
		t.Errorf("none: VNI %d, port %d; want no overlay", vni, port)
	}
}
