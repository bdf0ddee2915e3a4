package winsim

import (
	"strings"
	"testing"
)

// sc.exe takes barewords as strings, as every native command does: the
// join's service step deletes a service by `sc.exe delete kubelet` before
// creating it again (a re-join).
func TestScDeleteBareword(t *testing.T) {
	h := startTestHost(t, nil)
	s := "New-Service -Name 'kubelet' -BinaryPathName 'C:\\k\\kubelet.exe' | Out-Null\n" +
		"sc.exe delete kubelet\n" +
		"New-Service -Name 'kubelet' -BinaryPathName 'C:\\k\\kubelet.exe' | Out-Null\nWrite-Output 'created again'"
	out, stderr, code := run(t, h, encoded(s))
	if code != 0 || !strings.Contains(out, "[SC] DeleteService SUCCESS") || !strings.Contains(out, "created again") || strings.Contains(stderr, "already exists") {
		t.Fatalf("out %q, stderr %q, code %d", out, stderr, code)
	}
}
