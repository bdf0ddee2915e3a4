package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// The scaled-time acceptance runs (issue 35, "Done when"): the sandbox plays
// every operation at its P99 (latency.Tail) divided by tailFactor, and every
// resource's timeouts are its documented defaults divided by the same
// factor, so an apply that passes proves no default of the provider's
// fires before a slow but healthy deployment ends: the quickstart, a pool
// of 20 and its roll.
//
// Only the resources' timeouts (the `timeouts` blocks) are scaled; a
// timeout inside the provider (a stage's own bound) stays at real scale and
// is, here, that factor more lenient than against a real vCenter: those are
// held against the model's P99 by their own tests.
//
// They run in `make bench`, not `make test`: each is minutes of scaled
// time. BENCH_TAIL_FACTOR overrides the factor.
const tailFactor = 20

func tailModel(b *testing.B) *latency.Model {
	b.Helper()
	factor := float64(tailFactor)
	if s := os.Getenv("BENCH_TAIL_FACTOR"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 {
			b.Fatalf("BENCH_TAIL_FACTOR=%q: want a number above 0", s)
		}
		factor = f
	}
	return latency.New(factor, latency.Tail)
}

// docTimeouts reads a resource's default timeouts from its documentation
// (docs/resources/<doc>.md, "## Timeouts": "| `create` | 30 minutes |"),
// the figures users are told, which the docs check keeps equal to the
// schema's templates.
func docTimeouts(b *testing.B, doc string) map[string]time.Duration {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "resources", doc+".md"))
	if err != nil {
		b.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Timeouts")
	if !ok {
		b.Fatalf("docs/resources/%s.md has no Timeouts section", doc)
	}
	out := map[string]time.Duration{}
	for _, m := range timeoutRow.FindAllStringSubmatch(section, -1) {
		n, _ := strconv.Atoi(m[2])
		unit := time.Minute
		if strings.HasPrefix(m[3], "hour") {
			unit = time.Hour
		}
		if _, seen := out[m[1]]; !seen {
			out[m[1]] = time.Duration(n) * unit
		}
	}
	for _, op := range []string{"create", "delete"} {
		if out[op] == 0 {
			b.Fatalf("docs/resources/%s.md: no default %s timeout in its Timeouts table", doc, op)
		}
	}
	return out
}

var timeoutRow = regexp.MustCompile("\\| `(create|update|delete)` \\| (\\d+) (minutes?|hours?) \\|")

// timeoutsBlock is a timeouts block of the defaults divided by factor.
func timeoutsBlock(defaults map[string]time.Duration, factor float64) string {
	var b strings.Builder
	b.WriteString("  timeouts {\n")
	for _, op := range []string{"create", "update", "delete"} {
		if d, ok := defaults[op]; ok {
			fmt.Fprintf(&b, "    %s = %q\n", op, time.Duration(float64(d)/factor).Round(time.Second).String())
		}
	}
	b.WriteString("  }\n")
	return b.String()
}

// withTimeouts adds a timeouts block to every resource of typ in config.
func withTimeouts(config, typ string, block string) string {
	re := regexp.MustCompile(`(?m)^resource "` + typ + `" "[^"]+" \{\n`)
	return re.ReplaceAllStringFunc(config, func(open string) string { return open + block })
}

// BenchmarkTailQuickstart applies examples/quickstart (as `make demo` does:
// its files as they are, the sandbox's settings in TF_VAR_*) under the P99
// model, with the golden image's, the nodes' and the networking's timeouts
// their defaults divided by the factor; then plans (nothing may change) and
// destroys it.
func BenchmarkTailQuickstart(b *testing.B) {
	model := tailModel(b)
	w := getWorldOf(b, model)
	b.StopTimer()
	dir := filepath.Join(w.dir, "work", "tail-quickstart")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "quickstart", "*.tf"))
	if err != nil || len(files) == 0 {
		b.Fatalf("examples/quickstart: %v (%d files)", err, len(files))
	}
	var scaled []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		config := string(data)
		for typ, doc := range map[string]string{"windows_golden_image": "golden_image", "windows_node": "node", "windows_node_networking": "node_networking"} {
			if strings.Contains(config, `resource "`+typ+`"`) {
				block := timeoutsBlock(docTimeouts(b, doc), model.Factor)
				config = withTimeouts(config, typ, block)
				scaled = append(scaled, typ+": "+strings.Join(strings.Fields(block), " "))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(config), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.terraform(b.Context(), dir, "init", nil, "init", "-input=false", "-no-color", "-plugin-dir="+w.plugins); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		run, err := w.terraform(context.Background(), dir, "destroy", nil, "destroy", "-auto-approve", "-input=false", "-no-color", "-json")
		if err != nil {
			b.Error(err)
			return
		}
		report(b, "destroy: %s", run.Wall.Round(time.Millisecond))
	})
	report(b, "latency model: %s; timeouts scaled by the same factor: %s", describeModel(model), strings.Join(scaled, "; "))
	// The quickstart's image installs no update: its path is the image
	// build's without the update's install and restart.
	var steps []latency.Step
	for _, st := range latency.ImageBuild {
		if st.Op != latency.UpdateInstall && st.Op != latency.UpdateRestart {
			steps = append(steps, st)
		}
	}
	path := model.PathOf(append(steps, latency.NodeCreate...))
	b.StartTimer()
	run, err := w.terraform(b.Context(), dir, "apply", nil, "apply", "-auto-approve", "-input=false", "-no-color", "-json")
	b.StopTimer()
	if err != nil {
		b.Fatalf("the quickstart under the P99 model: %v", err)
	}
	report(b, "the quickstart at P99: apply %s against a critical path of %s real = %s (the image, then 2 nodes at once)",
		run.Wall.Round(time.Millisecond), path.Real, model.Scale(path.Real).Round(time.Millisecond))
	plan, err := w.terraform(b.Context(), dir, "plan", nil, "plan", "-input=false", "-no-color", "-json", "-detailed-exitcode")
	if err != nil {
		b.Fatal(err)
	}
	if plan.ExitCode != 0 {
		b.Errorf("terraform plan after the quickstart's apply wants changes (exit code %d):\n%s", plan.ExitCode, plannedChanges(plan.Output))
	}
	b.ReportMetric(run.Wall.Seconds(), "apply-s")
}

// plannedChanges lists the planned_change events of -json plan output.
func plannedChanges(out []byte) string {
	var lines []string
	for _, line := range splitLines(out) {
		if e, ok := parseEvent(line); ok && e.Type == "planned_change" {
			lines = append(lines, e.Message)
		}
	}
	return strings.Join(lines, "\n")
}

// BenchmarkTailPool20Roll makes a windows_node_pool of 20 (max_parallel 20)
// under the P99 model, then rolls it to a second golden image with
// max_surge 4 and max_unavailable 0, the pool's timeouts its defaults
// divided by the factor; both images and the networking are applied first,
// not timed. A watch of the pool's Nodes fails it if fewer than 20 are Ready
// and schedulable at any moment of the roll.
func BenchmarkTailPool20Roll(b *testing.B) {
	const replicas, surge = 20, 4
	const prefix = "tail"
	model := tailModel(b)
	w := getWorldOf(b, model)
	b.StopTimer()
	bs := w.applyBase(b, "tail-base", "bench-tail-a", "bench-tail-b")
	defaults := docTimeouts(b, "node_pool")
	extra := fmt.Sprintf("%s\n  max_parallel      = %d\n  max_surge         = %d\n  max_unavailable   = 0\n%s",
		skipCIDRCheck, replicas, surge, timeoutsBlock(defaults, model.Factor))
	dir := w.workdir(b, "tail-pool", w.poolConfig(prefix, replicas, bs.templates[0], bs.networkingID, extra))
	b.Cleanup(func() {
		if _, err := w.terraform(context.Background(), dir, "destroy", nil, "destroy", "-auto-approve", "-input=false", "-no-color", "-json"); err != nil {
			b.Error(err)
		}
	})
	report(b, "latency model: %s; the pool's timeouts scaled by the same factor: %s; images and networking %s",
		describeModel(model), strings.Join(strings.Fields(timeoutsBlock(defaults, model.Factor)), " "), bs.apply.Wall.Round(time.Millisecond))

	create := model.NodesPath(replicas, benchHosts, templateHosts, nil)
	b.StartTimer()
	run, err := w.terraform(b.Context(), dir, "create", nil, "apply", "-auto-approve", "-input=false", "-no-color", "-json")
	b.StopTimer()
	if err != nil {
		b.Fatalf("a pool of %d under the P99 model: %v", replicas, err)
	}
	report(b, "pool of %d at P99: apply %s against a critical path of %s = %s scaled (timeout %s scaled)",
		replicas, run.Wall.Round(time.Millisecond), create, model.Scale(create.Real).Round(time.Millisecond), model.Scale(defaults["create"]))

	capacity, err := watchCapacity(w.sb.ControlPlane.Client, prefix, replicas)
	if err != nil {
		b.Fatal(err)
	}
	defer capacity.close()
	waitFull(b, capacity, replicas)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(w.poolConfig(prefix, replicas, bs.templates[1], bs.networkingID, extra)), 0o600); err != nil {
		b.Fatal(err)
	}
	one, roll := model.Roll(replicas, surge, nil, nil)
	b.StartTimer()
	rolled, err := w.terraform(b.Context(), dir, "roll", nil, "apply", "-auto-approve", "-input=false", "-no-color", "-json")
	b.StopTimer()
	if err != nil {
		b.Fatalf("the roll of %d under the P99 model: %v", replicas, err)
	}
	_, _, minReady, maxNodes, _, dips := capacity.snapshot()
	report(b, "roll of %d at P99, max_surge %d: apply %s against a critical path of %d × (%s) = %s scaled (timeout %s scaled); min %d Ready and schedulable, max %d Nodes",
		replicas, surge, rolled.Wall.Round(time.Millisecond), (replicas+surge-1)/surge, one, model.Scale(roll).Round(time.Millisecond),
		model.Scale(defaults["update"]), minReady, maxNodes)
	if minReady < replicas {
		b.Errorf("capacity dropped below %d during the roll: %d at the least:\n%s", replicas, minReady, strings.Join(dips, "\n"))
	}
	b.ReportMetric(run.Wall.Seconds(), "create-s")
	b.ReportMetric(rolled.Wall.Seconds(), "roll-s")
}
