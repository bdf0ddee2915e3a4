package kubeletsim

import (
	"context"
	"fmt"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// Open vSwitch's userspace on a Windows node, as Antrea's Windows image
// ships it (/openvswitch/usr/bin, /openvswitch/usr/sbin) and its
// Run-AntreaOVS.ps1 runs it (build/charts/antrea-windows/conf/ovs): the
// database created with ovsdb-tool, ovsdb-server serving it on db.sock,
// ovs-vsctl initialising it, ovs-vswitchd running the datapath. Their
// command lines follow ovsdb-tool(1), ovsdb-server(1), ovs-vsctl(8) and
// ovs-vswitchd(8) of openvswitch/ovs; what the simulator does not model
// (--detach, which forks a daemon outside the simulated process tree, and
// every other subcommand) is refused.
const ovsDBSock = ovsRunDir + `\db.sock`

// ovsFatal is OVS's ovs_fatal: "<program>: <message>" and exit code 1.
func ovsFatal(p *winsim.Process, prog, format string, args ...any) int {
	fmt.Fprintf(p.Stderr, "%s: %s\n", prog, fmt.Sprintf(format, args...))
	return 1
}

// runOVSDBTool: ovsdb-tool create DB SCHEMA.
func runOVSDBTool(_ context.Context, p *winsim.Process) int {
	var args []string
	for _, a := range p.Args {
		if !strings.HasPrefix(a, "-") {
			args = append(args, a)
		}
	}
	if len(args) == 0 {
		return ovsFatal(p, "ovsdb-tool", "missing command name; use --help for help")
	}
	if args[0] != "create" {
		return ovsFatal(p, "ovsdb-tool", "unknown command '%s'; use --help for help (only create is modelled by the simulator)", args[0])
	}
	if len(args) != 3 {
		return ovsFatal(p, "ovsdb-tool", "'create' command requires DB and SCHEMA arguments in the simulator")
	}
	db, schema := hostPath(args[1]), hostPath(args[2])
	if !p.Host.FileExists(schema) {
		return ovsFatal(p, "ovsdb-tool", "I/O error: %s: open failed (No such file or directory)", args[2])
	}
	if p.Host.FileExists(db) {
		return ovsFatal(p, "ovsdb-tool", "I/O error: %s: create failed (File exists)", args[1])
	}
	if err := p.Host.WriteFile(db, []byte("OVSDB JSON Open_vSwitch\n")); err != nil {
		return ovsFatal(p, "ovsdb-tool", "I/O error: %s: create failed (%v)", args[1], err)
	}
	return 0
}

// ovsDaemonFlags parses the daemon options Antrea's scripts pass: --pidfile,
// --log-file=..., -vfile:..., --remote=punix:db.sock (ovsdb-server);
// --detach and --service are refused.
func ovsDaemonFlags(p *winsim.Process, prog string, takesDB bool) (db string, pidfile bool, remotes []string, code int) {
	for _, a := range p.Args {
		switch {
		case a == "--pidfile":
			pidfile = true
		case strings.HasPrefix(a, "--log-file"), strings.HasPrefix(a, "-v"), strings.HasPrefix(a, "--verbose"):
		case strings.HasPrefix(a, "--remote="):
			remotes = append(remotes, strings.TrimPrefix(a, "--remote="))
		case a == "--detach" || a == "--service":
			return "", false, nil, ovsFatal(p, prog, "%s is not modelled by the simulator (run the daemon in the foreground)", a)
		case strings.HasPrefix(a, "-"):
			return "", false, nil, ovsFatal(p, prog, "unrecognized option '%s'", a)
		case takesDB && db == "":
			db = a
		default:
			return "", false, nil, ovsFatal(p, prog, "unexpected argument %q", a)
		}
	}
	return db, pidfile, remotes, -1
}

// runOVSDBServer serves the database until it is stopped: db.sock exists
// while it runs (--remote=punix:db.sock, relative to the run directory).
func runOVSDBServer(ctx context.Context, p *winsim.Process) int {
	db, pidfile, remotes, code := ovsDaemonFlags(p, "ovsdb-server", true)
	if code >= 0 {
		return code
	}
	if db == "" {
		db = `C:\openvswitch\etc\openvswitch\conf.db`
	}
	if !p.Host.FileExists(hostPath(db)) {
		return ovsFatal(p, "ovsdb-server", "I/O error: %s: open failed (No such file or directory)", db)
	}
	var socks []string
	for _, r := range remotes {
		if !strings.HasPrefix(r, "punix:") {
			return ovsFatal(p, "ovsdb-server", "remote %q is not modelled by the simulator (punix: only)", r)
		}
		path := strings.TrimPrefix(r, "punix:")
		if !strings.Contains(path, `\`) && !strings.Contains(path, "/") {
			path = ovsRunDir + `\` + path
		}
		socks = append(socks, hostPath(path))
	}
	return ovsDaemon(ctx, p, "ovsdb-server", pidfile, socks)
}

// runOVSVswitchd needs ovsdb-server's db.sock (its default database,
// unix:<rundir>/db.sock).
func runOVSVswitchd(ctx context.Context, p *winsim.Process) int {
	_, pidfile, _, code := ovsDaemonFlags(p, "ovs-vswitchd", false)
	if code >= 0 {
		return code
	}
	if !p.Host.FileExists(ovsDBSock) {
		return ovsFatal(p, "ovs-vswitchd", "unix:%s: database connection failed (No such file or directory)", ovsDBSock)
	}
	return ovsDaemon(ctx, p, "ovs-vswitchd", pidfile, nil)
}

// ovsDaemon writes the pidfile and sockets, runs until ctx ends, and
// removes them as the daemon exits.
func ovsDaemon(ctx context.Context, p *winsim.Process, prog string, pidfile bool, socks []string) int {
	files := socks
	if pidfile {
		files = append(files, ovsRunDir+`\`+prog+".pid")
	}
	for _, f := range files {
		if err := p.Host.WriteFile(f, []byte(prog)); err != nil {
			return ovsFatal(p, prog, "%s: %v", f, err)
		}
	}
	markReady(p)
	<-ctx.Done()
	for _, f := range files {
		_ = p.Host.RemoveFile(f)
	}
	return 0
}

// runOVSVsctl: --no-wait init, and --no-wait set Open_vSwitch . key=value,
// against ovsdb-server's db.sock.
func runOVSVsctl(_ context.Context, p *winsim.Process) int {
	var args []string
	for _, a := range p.Args {
		if a == "--no-wait" {
			continue
		}
		if strings.HasPrefix(a, "-") {
			return ovsFatal(p, "ovs-vsctl", "option %s is not modelled by the simulator", a)
		}
		args = append(args, a)
	}
	if !p.Host.FileExists(ovsDBSock) {
		return ovsFatal(p, "ovs-vsctl", "unix:%s: database connection failed (No such file or directory)", ovsDBSock)
	}
	switch {
	case len(args) == 1 && args[0] == "init":
		return 0
	case len(args) >= 4 && args[0] == "set" && strings.EqualFold(args[1], "Open_vSwitch") && args[2] == ".":
		return 0
	case len(args) == 0:
		return ovsFatal(p, "ovs-vsctl", "missing command name (use --help for help)")
	}
	return ovsFatal(p, "ovs-vsctl", "command %q is not modelled by the simulator (init and set Open_vSwitch . only)", strings.Join(args, " "))
}
