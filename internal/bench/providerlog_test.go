package bench

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// logEntry is one line the provider logged through tflog, as Terraform
// writes it to TF_LOG_PATH:
//
//	2026-01-02T03:04:05.678Z [INFO]  provider.terraform-provider-windows_v0.1.0: windows node: clone: @caller=... template=/DC0/vm/golden/x tf_req_id=... timestamp=2026-01-02T03:04:05.678Z
type logEntry struct {
	Time    time.Time
	Message string
	Fields  map[string]string
}

var (
	logLineRE = regexp.MustCompile(`^(\S+) \[([A-Z]+)\]\s+provider\.terraform-provider-windows[^:]*: (.*)$`)
	fieldRE   = regexp.MustCompile(`(?:^|\s)([@A-Za-z0-9_.]+)=("(?:[^"\\]|\\.)*"|\S*)`)
)

// parseProviderLog reads the provider's lines from a TF_LOG_PATH file.
func parseProviderLog(path string) ([]logEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var out []logEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if e, ok := parseProviderLine(sc.Text()); ok {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

func parseProviderLine(line string) (logEntry, bool) {
	m := logLineRE.FindStringSubmatch(line)
	if m == nil {
		return logEntry{}, false
	}
	e := logEntry{Fields: map[string]string{}}
	// The message ends where the key=value fields begin: at the first
	// ": " followed by a field.
	rest := m[3]
	e.Message = rest
	for i := 0; i < len(rest); {
		j := strings.Index(rest[i:], ": ")
		if j < 0 {
			break
		}
		j += i
		if loc := fieldRE.FindStringIndex(rest[j+2:]); loc != nil && loc[0] == 0 {
			e.Message = rest[:j]
			for _, f := range fieldRE.FindAllStringSubmatch(rest[j+2:], -1) {
				v := f[2]
				if strings.HasPrefix(v, `"`) {
					v = strings.ReplaceAll(strings.Trim(v, `"`), `\"`, `"`)
				}
				e.Fields[f[1]] = v
			}
			break
		}
		i = j + 2
	}
	// The provider's own timestamp (when it logged) is more precise than
	// Terraform's (when it wrote the line); use it when there is one.
	for _, s := range []string{e.Fields["timestamp"], m[1]} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			e.Time = t
			break
		}
		if t, err := time.Parse("2006-01-02T15:04:05.000Z0700", s); err == nil {
			e.Time = t
			break
		}
	}
	return e, !e.Time.IsZero()
}

// nodeCreate is one windows_node create as the provider logged it: its
// stages ("clone", "power on", ..., "node settings") in order.
type nodeCreate struct {
	Node        string
	Stages      []stageTime
	Joined      time.Time
	ReadyToDone time.Duration
}

type stageTime struct {
	Name string
	At   time.Time
}

// nodeCreates groups the provider's "windows node: <stage>" lines by request
// (tf_req_id) and ends each create at its "windows node joined" line.
func nodeCreates(entries []logEntry) []*nodeCreate {
	byReq := map[string]*nodeCreate{}
	var order []string
	for _, e := range entries {
		if e.Fields["tf_rpc"] != "ApplyResourceChange" || e.Fields["tf_resource_type"] != "windows_node" {
			continue
		}
		req := e.Fields["tf_req_id"]
		c := byReq[req]
		if c == nil {
			c = &nodeCreate{}
			byReq[req] = c
			order = append(order, req)
		}
		switch {
		case e.Message == "windows node joined":
			c.Node = e.Fields["node"]
			c.Joined = e.Time
			c.ReadyToDone, _ = time.ParseDuration(e.Fields["ready_to_done"])
		case strings.HasPrefix(e.Message, "windows node: "):
			c.Stages = append(c.Stages, stageTime{Name: strings.TrimPrefix(e.Message, "windows node: "), At: e.Time})
		}
	}
	var out []*nodeCreate
	for _, req := range order {
		if c := byReq[req]; !c.Joined.IsZero() && len(c.Stages) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// stageTable summarizes where creates spent their time: per stage (in the
// order stages run), the median and maximum time to the next stage (the
// last one to "joined").
func stageTable(creates []*nodeCreate) string {
	durations := map[string][]time.Duration{}
	var order []string
	for _, c := range creates {
		for i, s := range c.Stages {
			end := c.Joined
			if i+1 < len(c.Stages) {
				end = c.Stages[i+1].At
			}
			if _, ok := durations[s.Name]; !ok {
				order = append(order, s.Name)
			}
			durations[s.Name] = append(durations[s.Name], end.Sub(s.At))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-34s %9s %9s %9s\n", "stage (to the next one)", "median", "mean", "max")
	for _, name := range order {
		d := durations[name]
		fmt.Fprintf(&b, "%-34s %9s %9s %9s\n", name, ms(percentile(d, 50)), ms(mean(d)), ms(percentile(d, 100)))
	}
	return b.String()
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(p/100*float64(len(s))+0.5) - 1
	rank = max(0, min(rank, len(s)-1))
	return s[rank]
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func distribution(ds []time.Duration) string {
	return fmt.Sprintf("n=%d min=%s p50=%s p90=%s max=%s mean=%s", len(ds),
		ms(percentile(ds, 0)), ms(percentile(ds, 50)), ms(percentile(ds, 90)), ms(percentile(ds, 100)), ms(mean(ds)))
}
