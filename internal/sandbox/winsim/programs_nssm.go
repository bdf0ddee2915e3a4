package winsim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// nssm.exe 2.24 (nssm-2.24/win64/nssm.exe of the release zip; source:
// https://git.nssm.cc/nssm/nssm, mirrored as kirillkovalenko/nssm, commit
// "NSSM 2.24." 220d2b0). What is modelled, with the source it follows:
//
//   - nssm install <svc> <app> [args...] (service.cpp pre_install_service,
//     install_service): CreateService with ImagePath = this nssm.exe,
//     SERVICE_AUTO_START, display name = the service name, LocalSystem;
//     Parameters\Application, AppParameters (the args joined by spaces) and
//     AppDirectory (the app's directory). Prints
//     `Service "<svc>" installed successfully!`; exit 5 when CreateService
//     fails (the service exists).
//   - nssm set|get|reset <svc> <parameter> [value...] (pre_edit_service):
//     the parameters of settings.cpp; an unknown one prints
//     `Invalid parameter "<p>".  Valid parameters are:` and the list, exit 1.
//     A missing service: `Can't open service!` and OpenService's message,
//     exit 3. AppExit takes a subparameter (Default or an exit code).
//   - nssm remove <svc> confirm, nssm start|stop|restart|status <svc>
//     (control_service): "<svc>: START: The operation completed successfully."
//   - as the service (started by the SCM with no arguments, service.cpp
//     service_main/start_service): each start reads the Parameters again,
//     rotates AppStdout/AppStderr when AppRotateFiles is set (io.cpp
//     rotate_file: only files at least AppRotateBytes long, renamed to
//     <name>-YYYYMMDDTHHMMSS.mmm<ext> after their last write time, UTC),
//     opens them for appending (CreateFile OPEN_ALWAYS: a missing directory
//     is not created; nssm 2.24's write_to_file does not notice the failure,
//     so the application runs with its output lost), launches Application
//     with AppParameters (split by CommandLineToArgvW rules), in
//     AppDirectory, with the service's environment plus
//     AppEnvironmentExtra (AppEnvironment replaces it), reports Running after
//     at most AppThrottle ms (default 1500), and when the application exits
//     applies AppExit (Restart by default: after AppRestartDelay, or the
//     throttle back-off 2^(n-1) s when it ran less than AppThrottle;
//     Ignore; Exit stops the service). A missing Application fails
//     CreateProcess: the service stops with service-specific error 3.
//     AppRotateOnline rotates a file while the application writes it once it
//     reaches AppRotateBytes.
//
// nssm's own restart is distinct from the SCM's recovery actions, which it
// also sets nothing for.
func init() { registerProgram("nssm", SubsystemConsole, runNSSM) }

// nssmSettings are the parameter names of settings.cpp, in its order (what
// an invalid parameter lists). Native ones live in the service's key, the
// others under Parameters.
var nssmSettings = []string{
	"Application", "AppParameters", "AppDirectory", "AppExit", "AppAffinity", "AppEnvironment",
	"AppEnvironmentExtra", "AppNoConsole", "AppPriority", "AppRestartDelay", "AppStdin",
	"AppStdinShareMode", "AppStdinCreationDisposition", "AppStdinFlagsAndAttributes", "AppStdout",
	"AppStdoutShareMode", "AppStdoutCreationDisposition", "AppStdoutFlagsAndAttributes", "AppStderr",
	"AppStderrShareMode", "AppStderrCreationDisposition", "AppStderrFlagsAndAttributes",
	"AppStopMethodSkip", "AppStopMethodConsole", "AppStopMethodWindow", "AppStopMethodThreads",
	"AppThrottle", "AppRotateFiles", "AppRotateOnline", "AppRotateSeconds", "AppRotateBytes",
	"AppRotateBytesHigh", "DependOnGroup", "DependOnService", "Description", "DisplayName",
	"ImagePath", "ObjectName", "Name", "Start", "Type",
}

var nssmDWORD = map[string]bool{
	"appnoconsole": true, "apprestartdelay": true, "appstopmethodskip": true, "appstopmethodconsole": true,
	"appstopmethodwindow": true, "appstopmethodthreads": true, "appthrottle": true, "approtatefiles": true,
	"approtateonline": true, "approtateseconds": true, "approtatebytes": true, "approtatebyteshigh": true,
	"appstdinsharemode": true, "appstdincreationdisposition": true, "appstdinflagsandattributes": true,
	"appstdoutsharemode": true, "appstdoutcreationdisposition": true, "appstdoutflagsandattributes": true,
	"appstderrsharemode": true, "appstderrcreationdisposition": true, "appstderrflagsandattributes": true,
}

// nssmModelled are the parameters whose effect the simulator models; the
// others are stored but refused when set, so nothing pretends to work.
var nssmModelled = map[string]bool{
	"application": true, "appparameters": true, "appdirectory": true, "appexit": true,
	"appenvironment": true, "appenvironmentextra": true, "apprestartdelay": true, "appstdout": true,
	"appstderr": true, "appthrottle": true, "approtatefiles": true, "approtateonline": true,
	"approtateseconds": true, "approtatebytes": true, "dependonservice": true, "description": true,
	"displayname": true, "objectname": true, "start": true, "appnoconsole": true,
}

func nssmParams(svc string) string { return serviceKey(svc) + `\Parameters` }

func runNSSM(ctx context.Context, p *Process) int {
	if p.Service != "" && len(p.Args) == 0 {
		return nssmService(ctx, p)
	}
	h, out, errOut := p.Host, p.Stdout, p.Stderr
	if len(p.Args) == 0 {
		fmt.Fprint(errOut, "winsim: nssm's usage text and GUI are not modelled\r\n")
		return 1
	}
	cmd := strings.ToLower(p.Args[0])
	args := p.Args[1:]
	openFailed := func(name string) int {
		fmt.Fprintf(errOut, "Can't open service!\r\nOpenService(): %s\r\n\r\n", errServiceDoesNotExist.Message)
		return 3
	}
	switch cmd {
	case "install":
		if len(args) < 2 {
			fmt.Fprint(errOut, "winsim: nssm install without a service name and application (the GUI) is not modelled\r\n")
			return 1
		}
		svc, app := args[0], args[1]
		dir := app[:max(strings.LastIndexAny(app, `\/`), 0)]
		err := h.svcs.create(Service{Name: svc, DisplayName: svc, BinaryPathName: p.Path, StartupType: StartupAutomatic})
		if err != nil {
			fmt.Fprintf(errOut, "Error creating service!\r\nCreateService(): %s\r\n\r\n", scMessage(err))
			return 5
		}
		if err := h.reg.setMany(nssmParams(svc), map[string]RegValue{
			"Application":   {Type: RegExpandSZ, Str: app},
			"AppParameters": {Type: RegExpandSZ, Str: strings.Join(args[2:], " ")},
			"AppDirectory":  {Type: RegExpandSZ, Str: dir},
			"AppExit":       {Type: RegSZ, Str: ""},
		}); err != nil {
			fmt.Fprintf(errOut, "%v\r\n", err)
			return 6
		}
		// AppExit's default action is the key's default value.
		_ = h.reg.set(nssmParams(svc)+`\AppExit`, "", RegValue{Type: RegSZ, Str: "Restart"})
		_, _ = h.reg.deleteValue(nssmParams(svc), "AppExit")
		fmt.Fprintf(out, "Service %q installed successfully!\r\n", svc)
		return 0
	case "set", "get", "reset", "unset":
		return nssmEdit(p, cmd, args, openFailed)
	case "remove":
		if len(args) < 2 || !strings.EqualFold(args[1], "confirm") {
			fmt.Fprint(errOut, "To remove a service without confirmation: nssm remove <servicename> confirm\r\n")
			return 100
		}
		if _, ok := h.svcs.get(args[0]); !ok {
			return openFailed(args[0])
		}
		if err := h.svcs.remove(args[0]); err != nil {
			fmt.Fprint(errOut, "Error deleting service!\r\n")
			return 4
		}
		fmt.Fprintf(out, "Service %q removed successfully!\r\n", args[0])
		return 0
	case "start", "stop", "restart", "status":
		if len(args) < 1 {
			fmt.Fprint(errOut, "winsim: nssm's usage text is not modelled\r\n")
			return 1
		}
		s, ok := h.svcs.get(args[0])
		if !ok {
			return openFailed(args[0])
		}
		if cmd == "status" {
			fmt.Fprintf(out, "%s\r\n", map[string]string{StatusRunning: "SERVICE_RUNNING", StatusStopped: "SERVICE_STOPPED",
				StatusStartPending: "SERVICE_START_PENDING", StatusStopPending: "SERVICE_STOP_PENDING"}[s.Status])
			return 0
		}
		if cmd == "stop" || cmd == "restart" {
			if s.Status == StatusStopped {
				// ControlService fails with ERROR_SERVICE_NOT_ACTIVE, which nssm treats as done.
				fmt.Fprintf(errOut, "%s: STOP: %s\r\n", s.Name, errServiceNotActive.Message)
			} else if err := h.stopService(s.Name); err != nil {
				fmt.Fprintf(errOut, "%s: STOP: %s\r\n", s.Name, scMessage(err))
				return 1
			} else {
				fmt.Fprintf(out, "%s: STOP: The operation completed successfully.\r\n", s.Name)
			}
		}
		if cmd == "start" || cmd == "restart" {
			if err := h.startService(s.Name); err != nil {
				fmt.Fprintf(errOut, "%s: START: %s\r\n", s.Name, scMessage(err))
				return 1
			}
			fmt.Fprintf(out, "%s: START: The operation completed successfully.\r\n", s.Name)
		}
		return 0
	}
	fmt.Fprintf(errOut, "winsim: nssm %s is not modelled\r\n", cmd)
	return 1
}

// nssmEdit is pre_edit_service for get, set and reset.
func nssmEdit(p *Process, cmd string, args []string, openFailed func(string) int) int {
	h, out, errOut := p.Host, p.Stdout, p.Stderr
	if len(args) < 2 || (cmd == "set" && len(args) < 3) {
		fmt.Fprint(errOut, "winsim: nssm's usage text is not modelled\r\n")
		return 1
	}
	svc, param := args[0], args[1]
	canon := ""
	for _, n := range nssmSettings {
		if strings.EqualFold(n, param) {
			canon = n
		}
	}
	if canon == "" {
		fmt.Fprintf(errOut, "Invalid parameter %q.  Valid parameters are:\r\n%s\r\n", param, strings.Join(nssmSettings, "\r\n"))
		return 1
	}
	lc := strings.ToLower(canon)
	values := args[2:]
	sub := ""
	if lc == "appexit" {
		if len(args) < 3 || (cmd == "set" && len(args) < 4) {
			fmt.Fprintf(errOut, "Parameter %q requires a subparameter!\r\n", canon)
			return 1
		}
		sub, values = args[2], args[3:]
	}
	s, ok := h.svcs.get(svc)
	if !ok {
		return openFailed(svc)
	}
	native := map[string]bool{"dependongroup": true, "dependonservice": true, "description": true, "displayname": true,
		"imagepath": true, "objectname": true, "name": true, "start": true, "type": true}[lc]
	if !native && !h.reg.keyExists(nssmParams(s.Name)) {
		fmt.Fprintf(errOut, "Parameter %q is only valid for services managed by NSSM!\r\n", canon)
		return 1
	}
	if cmd == "get" {
		fmt.Fprintf(out, "%s\r\n", nssmGet(h, s, lc, sub))
		return 0
	}
	if cmd == "set" && !nssmModelled[lc] {
		fmt.Fprintf(errOut, "winsim: nssm parameter %s is not modelled\r\n", canon)
		return 6
	}
	joiner := " "
	if lc == "appenvironment" || lc == "appenvironmentextra" || lc == "dependonservice" || lc == "dependongroup" {
		joiner = "\r\n" // ADDITIONAL_CRLF: one value per argument
	}
	value := strings.Join(values, joiner)
	if err := nssmSet(h, s, lc, canon, sub, value, cmd != "set"); err != nil {
		fmt.Fprintf(errOut, "%v\r\n", err)
		return 6
	}
	fmt.Fprintf(out, "Set parameter %q for service %q.\r\n", canon, s.Name)
	return 0
}

func nssmGet(h *Host, s Service, lc, sub string) string {
	switch lc {
	case "dependonservice":
		return strings.Join(s.DependOnService, "\r\n")
	case "description":
		return s.Description
	case "displayname":
		return s.DisplayName
	case "imagepath":
		return s.BinaryPathName
	case "objectname":
		return s.ObjectName
	case "name":
		return s.Name
	case "type":
		return "SERVICE_WIN32_OWN_PROCESS"
	case "start":
		switch {
		case s.StartupType == StartupManual:
			return "SERVICE_DEMAND_START"
		case s.StartupType == StartupDisabled:
			return "SERVICE_DISABLED"
		case s.DelayedAutoStart:
			return "SERVICE_DELAYED_AUTO_START"
		}
		return "SERVICE_AUTO_START"
	case "appexit":
		name := sub
		if strings.EqualFold(sub, "default") {
			name = ""
		}
		return h.reg.getString(nssmParams(s.Name)+`\AppExit`, name)
	}
	for _, n := range nssmSettings {
		if strings.EqualFold(n, lc) {
			v, ok := h.reg.get(nssmParams(s.Name), n)
			if !ok && lc == "appthrottle" {
				return "1500"
			}
			return v.String()
		}
	}
	return ""
}

func nssmSet(h *Host, s Service, lc, canon, sub, value string, reset bool) error {
	switch lc {
	case "start":
		_, err := h.svcs.update(s.Name, func(svc *Service) error {
			svc.DelayedAutoStart = false
			switch strings.ToUpper(value) {
			case "SERVICE_AUTO_START", "":
				svc.StartupType = StartupAutomatic
			case "SERVICE_DELAYED_AUTO_START":
				svc.StartupType, svc.DelayedAutoStart = StartupAutomatic, true
			case "SERVICE_DEMAND_START":
				svc.StartupType = StartupManual
			case "SERVICE_DISABLED":
				svc.StartupType = StartupDisabled
			default:
				return fmt.Errorf("winsim: nssm Start %q: SERVICE_AUTO_START, SERVICE_DELAYED_AUTO_START, SERVICE_DEMAND_START or SERVICE_DISABLED", value)
			}
			return nil
		})
		return err
	case "displayname", "description", "dependonservice", "objectname":
		_, err := h.svcs.update(s.Name, func(svc *Service) error {
			switch lc {
			case "displayname":
				svc.DisplayName = value
			case "description":
				svc.Description = value
			case "dependonservice":
				svc.DependOnService = nil
				for _, d := range strings.Split(value, "\r\n") {
					if d != "" {
						svc.DependOnService = append(svc.DependOnService, d)
					}
				}
			case "objectname":
				if value != "" && !strings.EqualFold(value, "LocalSystem") {
					return fmt.Errorf("winsim: services running as %s are not modelled (LocalSystem only)", value)
				}
			}
			return nil
		})
		return err
	case "appexit":
		name := sub
		if strings.EqualFold(sub, "default") {
			name = ""
		}
		if reset {
			value = "Restart"
		}
		for _, a := range []string{"Restart", "Ignore", "Exit", "Suicide"} {
			if strings.EqualFold(a, value) {
				return h.reg.set(nssmParams(s.Name)+`\AppExit`, name, RegValue{Type: RegSZ, Str: a})
			}
		}
		return fmt.Errorf("winsim: nssm AppExit %q: Restart, Ignore, Exit or Suicide", value)
	}
	if reset {
		_, err := h.reg.deleteValue(nssmParams(s.Name), canon)
		return err
	}
	switch {
	case nssmDWORD[lc]:
		n, err := strconv.ParseUint(value, 10, 32)
		if err != nil {
			return fmt.Errorf("winsim: nssm %s takes a number, not %q", canon, value)
		}
		return h.reg.set(nssmParams(s.Name), canon, RegValue{Type: RegDWord, DWord: uint32(n)})
	case lc == "appenvironment" || lc == "appenvironmentextra":
		return h.reg.set(nssmParams(s.Name), canon, RegValue{Type: RegMultiSZ, Multi: strings.Split(value, "\r\n")})
	}
	return h.reg.set(nssmParams(s.Name), canon, RegValue{Type: RegExpandSZ, Str: value})
}
