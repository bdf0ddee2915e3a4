package winsim

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// ScriptRecord is one script (or command line) the host received.
type ScriptRecord struct {
	Time      time.Time
	Transport string // winrm-http, winrm-https, ssh
	User      string
	Text      string // decoded script text (see logText for what is abbreviated)
	Step      string // the "# step:" name, if any
	ExitCode  int
	Duration  time.Duration
}

// maxLoggedScript bounds one entry of scripts.log: upload chunks would
// otherwise copy every uploaded byte into the log.
const maxLoggedScript = 64 << 10

// maxKeptRecords bounds the in-memory history used by tests.
const maxKeptRecords = 2000

type scriptLog struct {
	mu      sync.Mutex
	path    string
	records []ScriptRecord
}

func (l *scriptLog) add(r ScriptRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.records) >= maxKeptRecords {
		l.records = append(l.records[:0], l.records[len(l.records)/2:]...)
	}
	l.records = append(l.records, r)
	text := r.Text
	if len(text) > maxLoggedScript {
		text = text[:maxLoggedScript] + fmt.Sprintf("\n... (%d more characters)", len(text)-maxLoggedScript)
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return // the log is for people; a full disk must not fail the script
	}
	defer func() { _ = f.Close() }() // the log is for people, as above
	step := ""
	if r.Step != "" {
		step = " step=" + r.Step
	}
	fmt.Fprintf(f, "=== %s %s user=%s exit=%d duration=%s%s\n%s\n",
		r.Time.UTC().Format(time.RFC3339Nano), r.Transport, r.User, r.ExitCode,
		r.Duration.Round(time.Millisecond), step, strings.TrimRight(text, "\r\n"))
}

func (l *scriptLog) list() []ScriptRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ScriptRecord(nil), l.records...)
}
