package kubeletsimtest_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/bootstrap"
	"github.com/wincluster/terraform-provider-windows/internal/networking"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim/kubeletsimtest"
)

// TestLayoutMatchesBootstrap: the harness lays hosts out from its own
// constants (the simulated world imports nothing of the provider); they are
// the paths the provider's image build leaves and its join expects, and a
// change on either side fails here.
func TestLayoutMatchesBootstrap(t *testing.T) {
	flannel, err := networking.Get("flannel")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, harness, provider string }{
		{"kubelet.exe", kubeletsimtest.KubeletExe, bootstrap.KubeletExe},
		{"kube-proxy.exe", kubeletsimtest.KubeProxyExe, bootstrap.KubeProxyExe},
		{"kube-log-runner.exe", kubeletsimtest.KubeLogRunnerExe, bootstrap.KubeLogRunnerExe},
		{"containerd.exe", kubeletsimtest.ContainerdExe, bootstrap.ContainerdExe},
		{"containerd config", kubeletsimtest.ContainerdConf, bootstrap.ContainerdConf},
		{"flanneld.exe", kubeletsimtest.FlanneldExe, networking.FlanneldExe},
		{"CNI bin dir", kubeletsimtest.CNIBinDir, bootstrap.CNIBinDir},
		{"CNI conf dir", kubeletsimtest.CNIConfDir, bootstrap.CNIConfDir},
		{"flannel conflist", kubeletsimtest.CNIConfList, flannel.CNIConfPath()},
	} {
		if c.harness != c.provider {
			t.Errorf("%s: kubeletsimtest has %s, internal/bootstrap %s", c.name, c.harness, c.provider)
		}
	}
}
