package localport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestReserveChoosesFreePortsBelowTheEphemeralRange(t *testing.T) {
	top := ephemeralStart(ephemeralRangeFile)
	ports, err := Reserve(5, true)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < lowest || p >= top {
			t.Errorf("port %d is outside [%d, %d)", p, lowest, top)
		}
		if seen[p] {
			t.Errorf("port %d chosen twice", p)
		}
		seen[p] = true
		// Released on return, so the caller's child can bind it.
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("port %d is not free after Reserve: %v", p, err)
			continue
		}
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Errorf("UDP port %d is not free after Reserve: %v", p, err)
		} else {
			_ = u.Close()
		}
		_ = l.Close()
	}
}

func TestEphemeralStart(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		want    int
	}{
		{"32768\t60999\n", 32768},
		{"40000 65000", 40000},
		{"1024 65535", defaultEphemeralStart}, // would leave nothing above lowest
		{"garbage", defaultEphemeralStart},
	} {
		p := filepath.Join(dir, "range")
		if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ephemeralStart(p); got != tc.want {
			t.Errorf("ephemeralStart(%q) = %d, want %d", tc.content, got, tc.want)
		}
	}
	if got := ephemeralStart(filepath.Join(dir, "missing")); got != defaultEphemeralStart {
		t.Errorf("missing file: got %d, want %d", got, defaultEphemeralStart)
	}
}
