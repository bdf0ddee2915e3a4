package kubeletsim

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// logger writes klog's text format:
//
//	I0612 10:04:05.123456    4242 server.go:123] "message" key="value"
//
// so kubelet.log reads like a real kubelet's and tools that show its last
// lines (windows_node, when Ready never comes) need nothing special.
type logger struct {
	mu  sync.Mutex
	w   io.Writer
	pid int
}

func newLogger(w io.Writer) *logger {
	if w == nil {
		w = io.Discard
	}
	return &logger{w: w, pid: 1000 + os.Getpid()%60000}
}

// line writes one structured entry; file is the source location klog would print.
func (l *logger) line(sev byte, file, msg string, kv ...any) {
	l.write(sev, file, fmt.Sprintf("%q", msg), kv...)
}

// Infof writes an unstructured entry (klog.Infof).
func (l *logger) Infof(file, format string, args ...any) {
	l.write('I', file, fmt.Sprintf(format, args...))
}

func (l *logger) write(sev byte, file, msg string, kv ...any) {
	now := time.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "%c%02d%02d %s %7d %s] %s", sev, now.Month(), now.Day(), now.Format("15:04:05.000000"), l.pid, file, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(" ")
		b.WriteString(fmt.Sprint(kv[i]))
		b.WriteString("=")
		b.WriteString(formatValue(kv[i+1]))
	}
	b.WriteString("\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, b.String())
}

func formatValue(v any) string {
	switch x := v.(type) {
	case error:
		return fmt.Sprintf("%q", x.Error())
	case string:
		return fmt.Sprintf("%q", x)
	case []string:
		return fmt.Sprintf("%q", x)
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s:%s", k, x[k])
		}
		return fmt.Sprintf("%q", "map["+strings.Join(parts, " ")+"]")
	case time.Duration:
		return fmt.Sprintf("%q", x.String())
	default:
		return fmt.Sprint(x)
	}
}

func (l *logger) Info(file, msg string, kv ...any) { l.line('I', file, msg, kv...) }
func (l *logger) Warn(file, msg string, kv ...any) { l.line('W', file, msg, kv...) }
func (l *logger) Error(file string, err error, msg string, kv ...any) {
	l.line('E', file, msg, append([]any{"err", err}, kv...)...)
}

// raw writes a line as is (what a kubelet prints before logging is set up).
func (l *logger) raw(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, s+"\n")
}
