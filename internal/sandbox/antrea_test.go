package sandbox

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/linuxnode"
)

// testAntreaLinuxSide installs Antrea's Linux side in noEncap: its
// ConfigMap carries the settings, the real DaemonSet controller places the
// agent's pod on the Linux node, which reports it Running and Ready, the
// node carries the MAC annotation Windows agents route by in noEncap, and the
// removal takes all of it away again.
func testAntreaLinuxSide(ctx context.Context, t *testing.T, s *Sandbox, cs kubernetes.Interface) {
	remove, err := s.LinuxNode.InstallAntrea(ctx, linuxnode.Antrea{Version: "v2.2.0", TrafficEncapMode: "noEncap", TunnelType: "geneve"})
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			_ = remove(context.Background())
		}
	})
	cm, err := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, linuxnode.AntreaConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if conf := cm.Data["antrea-agent.conf"]; !strings.Contains(conf, `trafficEncapMode: "noEncap"`) || !strings.Contains(conf, `tunnelType: "geneve"`) {
		t.Errorf("antrea-agent.conf =\n%s", conf)
	}
	pods := cs.CoreV1().Pods(metav1.NamespaceSystem)
	waitUntil(t, listWatch(pods.List, pods.Watch, "spec.nodeName", linuxnode.NodeName), &corev1.Pod{}, func(ev watch.Event) bool {
		p := ev.Object.(*corev1.Pod)
		if p.Labels["component"] != linuxnode.AntreaAgent || p.Status.Phase != corev1.PodRunning {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
	node, err := cs.CoreV1().Nodes().Get(ctx, linuxnode.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Annotations["node.antrea.io/mac-address"] == "" {
		t.Errorf("noEncap: the Linux node has no node.antrea.io/mac-address annotation: %v", node.Annotations)
	}
	removed = true
	if err := remove(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().DaemonSets(metav1.NamespaceSystem).Get(ctx, linuxnode.AntreaAgent, metav1.GetOptions{}); err == nil {
		t.Error("the antrea-agent DaemonSet is left")
	}
	if _, err := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, linuxnode.AntreaConfigMap, metav1.GetOptions{}); err == nil {
		t.Error("antrea-config is left")
	}
	node, err = cs.CoreV1().Nodes().Get(ctx, linuxnode.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := node.Annotations["node.antrea.io/mac-address"]; ok {
		t.Errorf("the MAC annotation is left: %q", v)
	}
}
