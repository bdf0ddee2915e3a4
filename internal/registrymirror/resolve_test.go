package registrymirror

import (
	"context"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/registry"
)

// TestResolveThroughTheSandboxMirror: against a real registry behind basic
// auth, the image resolves with the mirror's credential, is refused with a
// wrong one or none (401), and an image the mirror lacks is refused too
// (404); a registry without a mirror is not judged.
func TestResolveThroughTheSandboxMirror(t *testing.T) {
	m, err := registry.Start("puller", "right")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	ctx := context.Background()
	d, err := m.Push(ctx, "pause", "3.10.2", "10.0.20348.1")
	if err != nil {
		t.Fatal(err)
	}
	mirrors := []Mirror{{Registry: "registry.k8s.io", Endpoints: []string{"http://" + m.Addr}}}
	good := map[string]Credential{m.Addr: {Username: "puller", Password: "right"}}
	for _, img := range []string{"registry.k8s.io/pause:3.10.2", "registry.k8s.io/pause:3.10.2@" + d.String()} {
		res, err := Resolve(ctx, img, mirrors, good, nil)
		if err != nil || res.Outcome != Resolved || !strings.Contains(res.Answers[0], d.String()) {
			t.Errorf("%s: %+v, %v; want resolved to %s", img, res, err, d)
		}
	}
	for name, creds := range map[string]map[string]Credential{
		"wrong": {m.Addr: {Username: "puller", Password: "wrong"}},
		"none":  nil,
	} {
		res, err := Resolve(ctx, "registry.k8s.io/pause:3.10.2", mirrors, creds, nil)
		if err != nil || res.Outcome != Refused || !strings.Contains(res.Answers[0], "401") {
			t.Errorf("%s credential: %+v, %v; want refused with 401", name, res, err)
		}
	}
	if res, _ := Resolve(ctx, "registry.k8s.io/pause:9.9", mirrors, good, nil); res.Outcome != Refused || !strings.Contains(res.Answers[0], "404") {
		t.Errorf("missing tag: %+v, want refused with 404", res)
	}
	if res, _ := Resolve(ctx, "docker.io/library/busybox:1", mirrors, good, nil); res.Outcome != NoMirror {
		t.Errorf("unmirrored registry: %+v, want NoMirror", res)
	}
	for _, p := range m.Pulls() {
		if p.Status == 200 && p.User != "puller" {
			t.Errorf("the mirror served %s to %q", p.Path, p.User)
		}
	}
}
