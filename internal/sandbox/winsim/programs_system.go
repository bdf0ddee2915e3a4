package winsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The Windows-shipped programs the bootstrap runs (besides sc.exe, which the
// service control manager's file provides), and containerd's ctr. Each
// accepts the forms it documents and refuses any other: a line on stderr
// naming what it does not model, and a non-zero exit code.

func init() {
	registerProgram("cmd.exe", SubsystemConsole, runCmd)
	registerProgram("tar.exe", SubsystemConsole, runTar)
	registerProgram("icacls.exe", SubsystemConsole, runIcacls)
	registerProgram("hostname.exe", SubsystemConsole, runHostname)
	registerProgram("shutdown.exe", SubsystemConsole, runShutdown)
	registerProgram("sysprep.exe", SubsystemGUI, runSysprep)
	registerProgram("ctr", SubsystemConsole, runCtr)
}

func refuse(p *Process, what string) int {
	fmt.Fprintf(p.Stderr, "winsim: %s: the simulated host does not model %s\r\n", p.Program, what)
	return 1
}

// runCmd is cmd.exe /c <line> (and /s /c, /d /c): the line runs as cmd.exe's
// command lines do on the host (cmdline.go).
func runCmd(ctx context.Context, p *Process) int {
	args := p.Args
	for len(args) > 0 && (strings.EqualFold(args[0], "/s") || strings.EqualFold(args[0], "/d") || strings.EqualFold(args[0], "/q")) {
		args = args[1:]
	}
	if len(args) < 2 || !(strings.EqualFold(args[0], "/c") || strings.EqualFold(args[0], "/k")) {
		return refuse(p, "cmd.exe without /c <command>")
	}
	line := strings.Join(args[1:], " ")
	return p.Host.runLine(ctx, execRequest{Stdin: p.Stdin, Stdout: p.Stdout, Stderr: p.Stderr, Env: p.Env}, line, 1)
}

// runTar is bsdtar (tar.exe, in Windows since build 17063): -x with -f
// <archive>, -z optional, -C <dir>. Source: https://learn.microsoft.com/en-us/virtualization/community/team-blog/2017/20171219-tar-and-curl-come-to-windows
func runTar(ctx context.Context, p *Process) int {
	var archive, dir string
	extract := false
	for i := 0; i < len(p.Args); i++ {
		a := p.Args[i]
		switch {
		case a == "-C":
			if i+1 >= len(p.Args) {
				fmt.Fprintf(p.Stderr, "tar.exe: Option -C requires an argument\r\n")
				return 1
			}
			i++
			dir = p.Args[i]
		case strings.HasPrefix(a, "-") && len(a) > 1 && strings.Trim(a[1:], "xzvf") == "":
			for _, c := range a[1:] {
				switch c {
				case 'x':
					extract = true
				case 'f':
					if i+1 >= len(p.Args) {
						fmt.Fprintf(p.Stderr, "tar.exe: Option -f requires an argument\r\n")
						return 1
					}
					i++
					archive = p.Args[i]
				}
			}
		default:
			return refuse(p, "the tar argument "+a+" (tar.exe -xzf <archive> -C <dir>)")
		}
	}
	if !extract || archive == "" {
		return refuse(p, "tar without -x -f <archive>")
	}
	fs := p.Host.fs
	if dir == "" {
		dir = p.Dir
	}
	if ok, isDir := fs.Stat(dir); !ok || !isDir {
		fmt.Fprintf(p.Stderr, "tar.exe: could not chdir to '%s'\r\n\r\n", dir)
		return 1
	}
	data, err := fs.ReadFile(archive)
	if err != nil {
		fmt.Fprintf(p.Stderr, "tar.exe: Error opening archive: Failed to open '%s'\r\n", archive)
		return 1
	}
	if err := extractArchive(fs, data, dir, "tar"); err != nil {
		fmt.Fprintf(p.Stderr, "tar.exe: Error opening archive: Unrecognized archive format\r\n")
		return 1
	}
	return 0
}

func runHostname(ctx context.Context, p *Process) int {
	if len(p.Args) > 0 {
		fmt.Fprintf(p.Stderr, "sethostname: Use the Network Control Panel Applet to set hostname.\r\n")
		return 1
	}
	fmt.Fprintf(p.Stdout, "%s\r\n", p.Host.cfg.ComputerName)
	return 0
}

// runShutdown: /s or /p power off (the host goes down for good), /r
// restarts. Source: https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/shutdown
func runShutdown(ctx context.Context, p *Process) int {
	act := ""
	for _, a := range p.Args {
		switch strings.ToLower(strings.Replace(a, "-", "/", 1)) {
		case "/s", "/p":
			act = "off"
		case "/r":
			act = "reboot"
		case "/f", "/t", "0":
		default:
			if !regexp.MustCompile(`^\d+$`).MatchString(a) {
				return refuse(p, "the shutdown argument "+a)
			}
		}
	}
	switch act {
	case "off":
		p.Host.shutdownSoon()
	case "reboot":
		p.Host.rebootSoon()
	default:
		return refuse(p, "shutdown without /s, /p or /r")
	}
	return 0
}

// runSysprep: sysprep /generalize /oobe /shutdown /quiet [/unattend:<file>];
// the answer file is cached in %WINDIR%\Panther (setup_answerfile.go).
// Source: https://learn.microsoft.com/en-us/windows-hardware/manufacture/desktop/sysprep-command-line-options
func runSysprep(ctx context.Context, p *Process) int {
	shutdown, reboot := false, false
	unattend := ""
	for _, a := range p.Args {
		l := strings.ToLower(a)
		switch {
		case l == "/generalize" || l == "/oobe" || l == "/quiet" || l == "/mode:vm":
		case l == "/shutdown":
			shutdown = true
		case l == "/reboot":
			reboot = true
		case strings.HasPrefix(l, "/unattend:"):
			unattend = a[len("/unattend:"):]
			if ok, _ := p.Host.fs.Stat(unattend); !ok {
				return refuse(p, "a missing unattend file "+unattend)
			}
		default:
			return refuse(p, "the sysprep option "+a)
		}
	}
	if unattend != "" {
		// Sysprep refuses an answer file Setup could not use: Microsoft's
		// message for it is not in its documentation, so the simulator's
		// own names what is wrong (setup_answerfile.go, checkAnswerFile).
		b, err := p.Host.fs.ReadFile(unattend)
		if err != nil {
			fmt.Fprintf(p.Stderr, "sysprep: %v\r\n", err)
			return 1
		}
		if problem := checkAnswerFile(b); problem != "" {
			fmt.Fprintf(p.Stderr, "winsim: sysprep.exe: the answer file %s cannot be used: %s\r\n", unattend, problem)
			return 1
		}
		// Setup caches the answer file in %WINDIR%\Panther (setup_answerfile.go).
		if err := p.Host.fs.cacheAnswerFile(unattend); err != nil {
			fmt.Fprintf(p.Stderr, "sysprep: %v\r\n", err)
			return 1
		}
	}
	switch {
	case shutdown:
		p.Host.shutdownSoon()
	case reboot:
		p.Host.rebootSoon()
	default:
		return refuse(p, "sysprep without /shutdown or /reboot")
	}
	return 0
}

// runCtr: ctr -n k8s.io images pull [--hosts-dir <dir>] [--user <user:password>] <ref>
// records the image in the host's image store (<Dir>/images.json). Source:
// https://github.com/containerd/containerd/blob/main/docs/getting-started.md.
// With --hosts-dir the pull goes through that directory's hosts.toml
// (PullThroughHosts; containerd docs/hosts.md "Using Host Namespace Configs
// with CTR"), sending --user's credential to any host that asks
// (cmd/ctr/commands/resolver.go: its Credentials function answers every
// host); ctr's error is then "ctr: <containerd's error>". Without it the
// image is taken as the upstream registry serving it.
func runCtr(ctx context.Context, p *Process) int {
	a := p.Args
	if len(a) >= 5 && (a[0] == "-n" || a[0] == "--namespace") && a[2] == "images" && a[3] == "pull" {
		hostsDir, user := "", ""
		rest := a[4:]
		for len(rest) > 1 {
			switch rest[0] {
			case "--hosts-dir":
				hostsDir = rest[1]
			case "--user", "-u":
				user = rest[1]
			default:
				return refuse(p, "ctr "+strings.Join(a, " ")+" (only --hosts-dir and --user of images pull)")
			}
			rest = rest[2:]
		}
		if len(rest) != 1 || strings.HasPrefix(rest[0], "-") {
			return refuse(p, "ctr "+strings.Join(a, " ")+" (one reference after images pull's options)")
		}
		ref := rest[0]
		if user != "" && !strings.Contains(user, ":") {
			return refuse(p, "ctr --user without :password (ctr would prompt for it)")
		}
		if hostsDir != "" {
			name, secret, _ := strings.Cut(user, ":")
			err := PullThroughHosts(ctx, p.Host.fs.ReadFile, hostsDir, func(string) [2]string { return [2]string{name, secret} }, nil, ref)
			if err != nil {
				fmt.Fprintf(p.Stderr, "ctr: %v\r\n", err)
				return 1
			}
		} else if user != "" {
			return refuse(p, "ctr images pull --user without --hosts-dir")
		}
		if err := p.Host.images.add(a[1], ref); err != nil {
			fmt.Fprintf(p.Stderr, "ctr: %v\r\n", err)
			return 1
		}
		fmt.Fprintf(p.Stdout, "%s: resolved\r\nunpacking windows/amd64 done\r\n", ref)
		return 0
	}
	return refuse(p, "ctr "+strings.Join(a, " ")+" (only ctr -n <namespace> images pull <ref>)")
}

// imageStore is the images ctr pulled, by namespace.
type imageStore struct {
	mu   sync.Mutex
	path string
}

func (s *imageStore) add(ns, ref string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string][]string{}
	if b, err := os.ReadFile(s.path); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	for _, r := range m[ns] {
		if r == ref {
			return nil
		}
	}
	m[ns] = append(m[ns], ref)
	sort.Strings(m[ns])
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(s.path, b, 0o644)
}

// Images returns the images pulled into a containerd namespace.
func (h *Host) Images(namespace string) []string {
	h.images.mu.Lock()
	defer h.images.mu.Unlock()
	m := map[string][]string{}
	if b, err := os.ReadFile(h.images.path); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m[namespace]
}

var _ = io.Discard
