package winsim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/kubeletsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// providerScripts are the scripts the provider sends to a Windows host, as
// its golden files hold them: the bootstrap steps (internal/bootstrap,
// "########## <step>" between steps, each step one script) and the start
// scripts of the networking agents' HostProcess containers (internal/kube).
// Read by relative path: the simulated world imports nothing of the
// provider, it judges what the provider wrote.
func providerScripts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"image-steps.ps1", "join-steps-flannel.ps1"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "bootstrap", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var cur []string
		flush := func() {
			if name != "" {
				out[f+"#"+name] = strings.Join(cur, "\n")
			}
		}
		for _, l := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
			if strings.HasPrefix(l, "########## ") {
				flush()
				name, cur = strings.TrimPrefix(l, "########## "), nil
				continue
			}
			cur = append(cur, l)
		}
		flush()
	}
	for _, f := range []string{"kube-flannel-ds-windows-start.ps1", "kube-proxy-windows-start.ps1"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "kube", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	return out
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
	for _, name := range names {
		for _, problem := range w.check(name, scripts[name]) {
			t.Error(problem)
		}
	}
	if w.counts[pwsh.UseCommand] == 0 || w.counts[pwsh.UseParameter] == 0 || w.counts[pwsh.UseStatic] == 0 || w.counts[pwsh.UseType] == 0 {
		t.Fatalf("the walk found %v: it cannot have walked the scripts", w.counts)
	}
	var list []string
	for k := range w.seen {
		list = append(list, k)
	}
	sort.Strings(list)
	t.Logf("%d scripts, uses %v; %d modelled things:\n%s", len(scripts), w.counts, len(list), strings.Join(list, "\n"))

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
}

// walker checks scripts' uses against the simulated host's models.
type walker struct {
	cmdlets  map[string]*winsim.Cmdlet
	programs map[string]bool
	counts   map[pwsh.UseKind]int
	seen     map[string]bool
}

func newWalker() *walker {
	w := &walker{cmdlets: map[string]*winsim.Cmdlet{}, programs: map[string]bool{}, counts: map[pwsh.UseKind]int{}, seen: map[string]bool{}}
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
