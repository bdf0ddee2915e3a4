package winsim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// providerDirs are where the provider's golden files hold every script it
// sends to a Windows host: the bootstrap steps of every template and option
// set (internal/bootstrap TestImageStepsGolden, TestJoinStepsGolden,
// TestOptionSetsGolden), the start scripts of the networking agents'
// HostProcess containers (internal/kube), and the transports' own scripts
// (internal/remote TestTransportScriptsGolden). A .ps1 there holds steps
// separated by "########## <step>" lines, or is one script.
var providerDirs = []string{"bootstrap", "kube", "remote"}

// providerScripts are the scripts of every .ps1 golden file of
// providerDirs. Read by relative path: the simulated world imports nothing
// of the provider, it judges what the provider wrote.
func providerScripts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	files := 0
	for _, d := range providerDirs {
		matches, err := filepath.Glob(filepath.Join("..", "..", d, "testdata", "*.ps1"))
		if err != nil {
			t.Fatal(err)
		}
		if len(matches) == 0 {
			t.Fatalf("internal/%s/testdata has no .ps1 golden file", d)
		}
		for _, m := range matches {
			files++
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			f := d + "/" + filepath.Base(m)
			text := strings.ReplaceAll(string(b), "\r\n", "\n")
			if !strings.HasPrefix(text, "########## ") {
				out[f] = text
				continue
			}
			var name string
			var cur []string
			flush := func() {
				if name != "" {
					out[f+"#"+name] = strings.Join(cur, "\n")
				}
			}
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, "########## ") {
					flush()
					name, cur = strings.TrimPrefix(l, "########## "), nil
					continue
				}
				cur = append(cur, l)
			}
			flush()
		}
	}
	if files < 9 {
		t.Fatalf("read %d golden .ps1 files; the provider's packages hold more", files)
	}
	return out
}

// TestProviderTemplatesAllRendered: every template of the provider's
// template directories has a step in the golden files the walk reads (a
// step's "# step: <name>" comment names its template's step), so a new
// template without a golden case fails here instead of going unwalked.
func TestProviderTemplatesAllRendered(t *testing.T) {
	scripts := providerScripts(t)
	var all strings.Builder
	for name, s := range scripts {
		all.WriteString(name + "\n" + s + "\n")
	}
	text := all.String()
	for _, dir := range []string{"bootstrap", "networking"} {
		tmpls, err := filepath.Glob(filepath.Join("..", "..", dir, "templates", "*.ps1.tmpl"))
		if err != nil || len(tmpls) == 0 {
			t.Fatalf("internal/%s/templates: %v (%d templates)", dir, err, len(tmpls))
		}
		for _, tp := range tmpls {
			b, err := os.ReadFile(tp)
			if err != nil {
				t.Fatal(err)
			}
			// The template's first fixed text (a line's longest part
			// outside template actions, of at least 12 characters) must
			// appear in a golden script rendered from it.
			first := fixedText(string(b))
			if first == "" {
				t.Fatalf("%s: no fixed text to find it by", tp)
			}
			if !strings.Contains(text, first) {
				t.Errorf("%s: no golden file holds a script rendered from it (its first line %q); add a golden case", tp, first)
			}
		}
	}
}

var templateAction = regexp.MustCompile(`\{\{.*?\}\}`)

// fixedText is the first line part of a template, outside its actions,
// that is long enough to identify what the template rendered.
func fixedText(tmpl string) string {
	for _, l := range strings.Split(strings.ReplaceAll(tmpl, "\r\n", "\n"), "\n") {
		best := ""
		for _, part := range templateAction.Split(l, -1) {
			if part = strings.TrimSpace(part); len(part) > len(best) {
				best = part
			}
		}
		if len(best) >= 12 {
			return best
		}
	}
	return ""
}

// TestProviderScriptsModelled walks every script the provider sends and
// shows that each cmdlet (and each parameter it is given), each .NET type
// literal and static member, and each native program it names is modelled
// by the simulated host: none of them would meet "not modelled" (or an
// unknown-command error for a real cmdlet) when the acceptance tests run
// them. The walk's counts must be non-zero, and the same check run on a
// planted script must report each unmodelled thing in it: a walk that
// cannot fail fails.
func TestProviderScriptsModelled(t *testing.T) {
	w := newWalker()
	scripts := providerScripts(t)
	if len(scripts) < 20 {
		t.Fatalf("found %d scripts; the golden files have more (the step split failed?)", len(scripts))
	}
	names := make([]string, 0, len(scripts))
	for n := range scripts {
		names = append(names, n)
	}
	sort.Strings(names)
	bound := 0
	for _, name := range names {
		for _, problem := range w.check(name, scripts[name]) {
			t.Error(problem)
		}
		n, problems := w.bind(name, scripts[name])
		bound += n
		for _, problem := range problems {
			t.Error(problem)
		}
	}
	if bound == 0 {
		t.Fatal("the binder bound no command: it cannot have walked the scripts")
	}
	if w.counts[pwsh.UseCommand] == 0 || w.counts[pwsh.UseParameter] == 0 || w.counts[pwsh.UseStatic] == 0 || w.counts[pwsh.UseType] == 0 {
		t.Fatalf("the walk found %v: it cannot have walked the scripts", w.counts)
	}
	var list []string
	for k := range w.seen {
		list = append(list, k)
	}
	sort.Strings(list)
	t.Logf("%d scripts, uses %v, %d commands bound; %d modelled things:\n%s", len(scripts), w.counts, bound, len(list), strings.Join(list, "\n"))

	planted := "Get-ChildItem -Path 'C:\\k'\nRemove-Item -Path 'C:\\x' -Filter '*.txt'\n[Environment]::UserDomainName\n[Nope.Type]::X()\nwhoami.exe /all\n& 'C:\\k\\nosuch.exe'\n"
	problems := newWalker().check("planted", planted)
	want := []string{"Get-ChildItem", "-Filter", "[Environment]::UserDomainName", "[Nope.Type]", "whoami.exe", "nosuch"}
	if len(problems) != len(want) {
		t.Fatalf("the planted script gave %d problems, want %d (one each of %v):\n%s", len(problems), len(want), want, strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d %q; want it to name %s", i, problems[i], w)
		}
	}

	// The binder's control: each command here would fail to bind on
	// Windows or is refused by the engine, and each must be reported.
	plantedBind := "Set-Service -Name 'x' -StartupType Sometimes\nNew-Service -Name 'x'\nGet-Content -Path 'a' -LiteralPath 'b'\nTest-Path 'a' 'b' 'c'\nInstall-WindowsFeature -Name 'Containers' -IncludeManagementTools\nGet-Service -Nme $n\nNew-NetFirewallRule -DisplayName x -Direction\n"
	_, bindProblems := newWalker().bind("planted", plantedBind)
	wantBind := []string{"Sometimes", "BinaryPathName", "Parameter set cannot be resolved", "positional parameter", "-IncludeManagementTools", "'Nme'", "Missing an argument"}
	if len(bindProblems) != len(wantBind) {
		t.Fatalf("the planted script gave %d binding problems, want %d:\n%s", len(bindProblems), len(wantBind), strings.Join(bindProblems, "\n"))
	}
	for i, w := range wantBind {
		if !strings.Contains(bindProblems[i], w) {
			t.Errorf("binding problem %d %q; want it to say %s", i, bindProblems[i], w)
		}
	}
	// Arguments known only at run time bind unconverted.
	if _, p := newWalker().bind("dynamic", "$st = 'Manual'\nSet-Service -Name $n -StartupType $st\nGet-Service -Name $n | Stop-Service -Force\n"); len(p) != 0 {
		t.Errorf("dynamic arguments and pipeline input were refused: %q", p)
	}
}

// walker checks scripts' uses against the simulated host's models.
type walker struct {
	registry *pwsh.Registry
	cmdlets  map[string]*winsim.Cmdlet
	programs map[string]bool
	counts   map[pwsh.UseKind]int
	seen     map[string]bool
}

func newWalker() *walker {
	w := &walker{registry: pwsh.NewRegistry(winsim.Commands()...), cmdlets: map[string]*winsim.Cmdlet{}, programs: map[string]bool{}, counts: map[pwsh.UseKind]int{}, seen: map[string]bool{}}
	for _, c := range winsim.Commands() {
		w.cmdlets[strings.ToLower(c.Name)] = c
		for _, a := range c.Aliases {
			w.cmdlets[strings.ToLower(a)] = c
		}
	}
	// Programs: the host's own, then the simulated kubelet's and node
	// agents' (kubeletsim.Programs, what the sandbox adds to every host).
	for _, p := range winsim.BuiltinPrograms() {
		w.programs[p] = true
	}
	for p := range kubeletsim.Programs(kubeletsim.HookOptions{}) {
		w.programs[strings.ToLower(p)] = true
	}
	return w
}

// check parses a script and returns a line for each thing it uses that the
// host does not model.
func (w *walker) check(name, script string) []string {
	s, err := pwsh.Parse(script)
	if err != nil {
		return []string{name + ": " + err.Error()}
	}
	var problems []string
	for _, u := range pwsh.Uses(s) {
		w.counts[u.Kind]++
		where := name + ":" + strconv.Itoa(u.Line)
		switch u.Kind {
		case pwsh.UseCommand:
			if _, ok := w.cmdlets[strings.ToLower(u.Name)]; ok {
				w.seen["cmdlet "+u.Name] = true
				continue
			}
			id, ok := programIdentity(u.Name)
			if !ok || !w.programs[id] {
				problems = append(problems, fmt.Sprintf("%s: %q is neither a modelled cmdlet nor a modelled program (identity %q)", where, u.Name, id))
				continue
			}
			w.seen["program "+id] = true
		case pwsh.UseParameter:
			c, ok := w.cmdlets[strings.ToLower(u.Name)]
			if !ok {
				continue // a program's argument, or a command reported above
			}
			if _, ok := c.Parameter(u.Member); !ok {
				problems = append(problems, fmt.Sprintf("%s: %s -%s is not a parameter the simulated %s binds", where, u.Name, u.Member, c.Name))
				continue
			}
			w.seen["parameter "+c.Name+" -"+u.Member] = true
		case pwsh.UseType:
			full, ok := pwsh.TypeModelled(u.Name)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: the type [%s] is not modelled", where, u.Name))
				continue
			}
			w.seen["type "+full] = true
		case pwsh.UseStatic:
			if _, known := pwsh.TypeModelled(u.Name); !known {
				continue // reported as a type
			}
			if !pwsh.StaticMemberModelled(u.Name, u.Member) {
				problems = append(problems, fmt.Sprintf("%s: [%s]::%s is not modelled", where, u.Name, u.Member))
				continue
			}
			w.seen["static ["+u.Name+"]::"+u.Member] = true
		case pwsh.UseDynamic:
			// & $exe: the program is known only at run time; the tests
			// that run the script meet the host's refusal if it is not
			// modelled.
			w.seen["dynamic "+u.Name] = true
		}
	}
	return problems
}

// bind sends a script through the engine's binder (pwsh.StaticBind): each
// command of a modelled cmdlet must bind as it would when the script runs.
// It returns how many commands it bound and a line for each that fails.
func (w *walker) bind(name, script string) (int, []string) {
	s, err := pwsh.Parse(script)
	if err != nil {
		return 0, []string{name + ": " + err.Error()}
	}
	commands := 0
	for _, u := range pwsh.Uses(s) {
		if _, ok := w.cmdlets[strings.ToLower(u.Name)]; ok && u.Kind == pwsh.UseCommand {
			commands++
		}
	}
	var problems []string
	for _, p := range pwsh.StaticBind(s, w.registry) {
		problems = append(problems, fmt.Sprintf("%s:%d: %s does not bind: %s", name, p.Line, p.Command, p.Message))
	}
	return commands - len(problems), problems
}

// programIdentity is the identity the host runs a program by: a name on
// PATH or a System32 path is a Windows program (tar.exe); any other path
// is the file the provider downloaded, whose simulated content names the
// program as its file does (C:\k\kube-proxy.exe is kube-proxy: the
// sandbox's artifact server builds each executable so).
func programIdentity(cmd string) (string, bool) {
	lower := strings.ToLower(cmd)
	base := lower[strings.LastIndexAny(lower, `\/`)+1:]
	if !strings.ContainsAny(lower, `\/`) || strings.HasPrefix(lower, `c:\windows\system32\`) {
		if !strings.HasSuffix(base, ".exe") {
			base += ".exe"
		}
		return base, true
	}
	if !strings.HasSuffix(base, ".exe") {
		return base, false
	}
	return strings.TrimSuffix(base, ".exe"), true
}
