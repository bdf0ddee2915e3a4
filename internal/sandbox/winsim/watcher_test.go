package winsim

import (
	"strings"
	"testing"
	"time"
)

// TestFileSystemWatcher: [IO.FileSystemWatcher] as modelled (pwsh's
// dotnet_watcher.go): WaitForChanged returns when the watched file appears
// (written, or renamed into place), times out when nothing happens (a file
// already there does not count), and what is not modelled is refused as
// .NET or the simulator would.
func TestFileSystemWatcher(t *testing.T) {
	h := startTestHost(t, nil)
	if err := h.fs.MkdirAll(`C:\w`); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = h.fs.WriteFile(`C:\w\x.tmp`, []byte("1"), false) // another file: no wake-up that counts
		time.Sleep(100 * time.Millisecond)
		_ = h.fs.WriteFile(`C:\w\lease.env`, []byte("A=1"), false)
	}()
	start := time.Now()
	out, stderr, code := run(t, h, encoded("$w = [IO.FileSystemWatcher]::new('C:\\w', 'lease.env')\n"+
		"$r = $w.WaitForChanged('Created, Renamed', 10000)\n$w.Dispose()\n"+
		"'{0} {1} {2}' -f $r.TimedOut, $r.ChangeType, $r.Name"))
	if code != 0 || strings.TrimSpace(out) != "False Created lease.env" {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, stderr)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("the wait took %v", el)
	}

	// Already there: nothing happens, the wait times out.
	start = time.Now()
	out, stderr, code = run(t, h, encoded("$w = [IO.FileSystemWatcher]::new('C:\\w', 'lease.env')\n"+
		"$w.WaitForChanged([IO.WatcherChangeTypes]::Created, 300).TimedOut"))
	if code != 0 || strings.TrimSpace(out) != "True" || time.Since(start) < 300*time.Millisecond {
		t.Errorf("timeout: exit %d, out %q, stderr %q after %v", code, out, stderr, time.Since(start))
	}

	for _, c := range []struct{ script, want string }{
		{"[IO.FileSystemWatcher]::new('C:\\nowhere', 'a')", `The directory name C:\nowhere is invalid.`},
		{"[IO.FileSystemWatcher]::new('C:\\w', '*.env')", "does not model a FileSystemWatcher filter other than one file name"},
		{"[IO.FileSystemWatcher]::new('C:\\w')", "does not model [System.IO.FileSystemWatcher]::new with 1 arguments"},
		{"[IO.FileSystemWatcher]::new('C:\\w', 'a').WaitForChanged('Changed', 10)", "does not model FileSystemWatcher.WaitForChanged for changes other than Created and Renamed"},
	} {
		_, stderr, code := run(t, h, encoded(c.script))
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", c.script, code, stderr, c.want)
		}
	}
}
