package winsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// sc.exe, the service control manager's command-line client
// (https://learn.microsoft.com/windows-server/administration/windows-commands/sc-create,
// sc-config, sc-failure, sc-delete, sc-query, sc-queryex, sc-qc, sc-start,
// sc-stop, sc-description). Options are "name= value" pairs: the "=" belongs
// to the name and the value is the next argument. Failures print
// "[SC] <API> FAILED <code>:" and the system message, and the exit code is
// the Win32 error (1060 for a missing service, 1073 for an existing one,
// 1056 already running, 1062 not started, 1072 marked for deletion ...).
// A command line sc.exe cannot parse (an option without its space, a stray
// word) exits 1639, ERROR_INVALID_COMMAND_LINE, after its usage text
// (observed: OctopusDeploy/Issues#1787, "sc.exe config failed with exit
// code: 1639" for a stray word); the simulator prints a one-line stand-in
// for the usage text.
func init() { registerProgram("sc.exe", SubsystemConsole, runSC) }

const exitInvalidCommandLine = 1639

func runSC(ctx context.Context, p *Process) int {
	h := p.Host
	out := p.Stdout
	if len(p.Args) == 0 {
		return scUsage(out, "")
	}
	cmd := strings.ToLower(p.Args[0])
	if cmd == "query" && len(p.Args) == 1 || cmd == "queryex" && len(p.Args) == 1 {
		fmt.Fprintf(p.Stderr, "winsim: sc.exe %s without a service name (enumeration) is not modelled\r\n", cmd)
		return 1
	}
	if len(p.Args) < 2 {
		return scUsage(out, cmd)
	}
	name := p.Args[1]
	opts, ok := scOptions(p.Args[2:])
	switch cmd {
	case "create":
		if !ok {
			return scUsage(out, cmd)
		}
		s := Service{Name: name, StartupType: StartupManual, BinaryPathName: opts["binpath="], DisplayName: opts["displayname="]}
		if s.BinaryPathName == "" {
			return scUsage(out, cmd)
		}
		if err := scApplyOptions(&s, opts); err != nil {
			return scFail(out, "CreateService", err)
		}
		if err := h.svcs.create(s); err != nil {
			return scFail(out, "CreateService", err)
		}
		fmt.Fprint(out, "[SC] CreateService SUCCESS\r\n")
		return 0
	case "config":
		if !ok || len(opts) == 0 {
			return scUsage(out, cmd)
		}
		var applyErr error
		_, err := h.svcs.update(name, func(s *Service) error {
			if v, ok := opts["binpath="]; ok {
				s.BinaryPathName = v
			}
			if v, ok := opts["displayname="]; ok {
				s.DisplayName = v
			}
			applyErr = scApplyOptions(s, opts)
			return applyErr
		})
		if err != nil {
			return scFail(out, scAPI(err, "ChangeServiceConfig"), err)
		}
		fmt.Fprint(out, "[SC] ChangeServiceConfig SUCCESS\r\n")
		return 0
	case "description":
		if _, err := h.svcs.update(name, func(s *Service) error { s.Description = strings.Join(p.Args[2:], " "); return nil }); err != nil {
			return scFail(out, scAPI(err, "ChangeServiceConfig2"), err)
		}
		fmt.Fprint(out, "[SC] ChangeServiceConfig2 SUCCESS\r\n")
		return 0
	case "failure":
		return scFailure(p, name, opts, ok)
	case "delete":
		if err := h.svcs.remove(name); err != nil {
			return scFail(out, scAPI(err, "DeleteService"), err)
		}
		fmt.Fprint(out, "[SC] DeleteService SUCCESS\r\n")
		return 0
	case "start":
		s, found := h.svcs.get(name)
		if !found {
			return scFail(out, "OpenService", noService(name))
		}
		if s.Status != StatusStopped {
			return scFail(out, "StartService", &ServiceError{Err: errServiceAlreadyRunning})
		}
		if err := h.startService(name); err != nil {
			if se := (*ServiceError)(nil); errors.As(err, &se) && se.Refused != "" {
				fmt.Fprintf(p.Stderr, "%s\r\n", se.Refused)
				return 1
			}
			return scFail(out, "StartService", err)
		}
		s, _ = h.svcs.get(name)
		scStatus(out, s, true)
		return 0
	case "stop":
		s, found := h.svcs.get(name)
		if !found {
			return scFail(out, "OpenService", noService(name))
		}
		if s.Status == StatusStopped {
			return scFail(out, "ControlService", &ServiceError{Err: errServiceNotActive})
		}
		if err := h.stopService(name); err != nil {
			return scFail(out, "ControlService", err)
		}
		s, _ = h.svcs.get(name)
		scStatus(out, s, false)
		return 0
	case "query", "queryex":
		s, found := h.svcs.get(name)
		if !found {
			return scFail(out, "EnumQueryServicesStatus:OpenService", noService(name))
		}
		scStatus(out, s, cmd == "queryex")
		return 0
	case "qc":
		s, found := h.svcs.get(name)
		if !found {
			return scFail(out, "OpenService", noService(name))
		}
		start := map[string]string{StartupAutomatic: "2   AUTO_START", StartupManual: "3   DEMAND_START", StartupDisabled: "4   DISABLED"}[s.StartupType]
		if s.DelayedAutoStart && s.StartupType == StartupAutomatic {
			start += "  (DELAYED)"
		}
		fmt.Fprintf(out, "[SC] QueryServiceConfig SUCCESS\r\n\r\nSERVICE_NAME: %s\r\n", s.Name)
		fmt.Fprintf(out, "        TYPE               : 10  WIN32_OWN_PROCESS\r\n        START_TYPE         : %s\r\n", start)
		fmt.Fprintf(out, "        ERROR_CONTROL      : 1   NORMAL\r\n        BINARY_PATH_NAME   : %s\r\n", s.BinaryPathName)
		fmt.Fprintf(out, "        LOAD_ORDER_GROUP   : \r\n        TAG                : 0\r\n        DISPLAY_NAME       : %s\r\n", s.DisplayName)
		deps := strings.Join(s.DependOnService, "\r\n                           : ")
		fmt.Fprintf(out, "        DEPENDENCIES       : %s\r\n        SERVICE_START_NAME : %s\r\n", deps, s.ObjectName)
		return 0
	}
	fmt.Fprintf(p.Stderr, "winsim: sc.exe %s is not modelled\r\n", cmd)
	return 1
}

// scOptions reads "name= value" pairs; ok is false for anything else (a
// word without "= ", "start=auto" written together, a missing value).
func scOptions(args []string) (map[string]string, bool) {
	opts := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := strings.ToLower(args[i])
		if !strings.HasSuffix(a, "=") || i+1 >= len(args) {
			return opts, false
		}
		opts[a] = args[i+1]
		i++
	}
	return opts, true
}

// scApplyOptions applies start=, depend=, obj= (and rejects what sc.exe
// would pass to the SCM as an invalid parameter, error 87).
func scApplyOptions(s *Service, opts map[string]string) error {
	if v, ok := opts["start="]; ok {
		s.DelayedAutoStart = false
		switch strings.ToLower(v) {
		case "auto":
			s.StartupType = StartupAutomatic
		case "delayed-auto":
			s.StartupType, s.DelayedAutoStart = StartupAutomatic, true
		case "demand":
			s.StartupType = StartupManual
		case "disabled":
			s.StartupType = StartupDisabled
		default:
			return &ServiceError{Err: errInvalidParameter}
		}
	}
	if v, ok := opts["depend="]; ok {
		// depend= takes names separated by "/"; "/" alone clears them.
		s.DependOnService = nil
		for _, d := range strings.Split(v, "/") {
			if d = strings.TrimSpace(d); d != "" {
				s.DependOnService = append(s.DependOnService, d)
			}
		}
	}
	if v, ok := opts["obj="]; ok {
		if !strings.EqualFold(v, "LocalSystem") && !strings.EqualFold(v, `.\LocalSystem`) {
			return &ServiceError{Refused: "winsim: services running as " + v + " are not modelled (LocalSystem only)"}
		}
		s.ObjectName = "LocalSystem"
	}
	for k := range opts {
		switch k {
		case "binpath=", "displayname=", "start=", "depend=", "obj=", "type=", "error=":
		default:
			return &ServiceError{Refused: "winsim: sc.exe option " + k + " is not modelled"}
		}
	}
	return nil
}

// scFailure is sc.exe failure <service> reset= <seconds> actions= restart/<ms>[/...]
// (https://learn.microsoft.com/windows-server/administration/windows-commands/sc-failure).
// reset= must come with actions=; only restart and "" (no action) are
// modelled: a reboot or run action is refused.
func scFailure(p *Process, name string, opts map[string]string, ok bool) int {
	out := p.Stdout
	s, found := p.Host.svcs.get(name)
	if !found {
		return scFail(out, "OpenService", noService(name))
	}
	reset, hasReset := opts["reset="]
	acts, hasActs := opts["actions="]
	if !ok || hasReset != hasActs || !hasActs {
		return scUsage(out, "failure")
	}
	fa := failureActions{}
	if strings.EqualFold(reset, "infinite") {
		fa.ResetSeconds = 0xFFFFFFFF
	} else {
		n, err := strconv.ParseUint(reset, 10, 32)
		if err != nil {
			return scUsage(out, "failure")
		}
		fa.ResetSeconds = uint32(n)
	}
	parts := strings.Split(acts, "/")
	if len(parts)%2 != 0 {
		return scUsage(out, "failure")
	}
	for i := 0; i < len(parts); i += 2 {
		ms, err := strconv.ParseUint(parts[i+1], 10, 32)
		if err != nil {
			return scUsage(out, "failure")
		}
		var t int
		switch strings.ToLower(parts[i]) {
		case "restart":
			t = scActionRestart
		case "", "none":
			t = scActionNone
		case "reboot", "run":
			fmt.Fprintf(p.Stderr, "winsim: the %s recovery action is not modelled\r\n", parts[i])
			return 1
		default:
			return scUsage(out, "failure")
		}
		fa.Actions = append(fa.Actions, scAction{Type: t, Delay: time.Duration(ms) * time.Millisecond})
	}
	if err := p.Host.setFailureActions(s.Name, fa); err != nil {
		fmt.Fprintf(p.Stderr, "%v\r\n", err)
		return 1
	}
	fmt.Fprint(out, "[SC] ChangeServiceConfig2 SUCCESS\r\n")
	return 0
}

// scAPI names the API whose failure sc.exe reports: a missing service fails
// at OpenService whatever the command.
func scAPI(err error, api string) string {
	if se := (*ServiceError)(nil); errors.As(err, &se) && se.Err == errServiceDoesNotExist {
		return "OpenService"
	}
	return api
}

func scFail(out io.Writer, api string, err error) int {
	var se *ServiceError
	ok := errors.As(err, &se)
	if !ok || se.Err == nil {
		msg := err.Error()
		if ok {
			msg = se.Refused
		}
		fmt.Fprintf(out, "%s\r\n", msg)
		return 1
	}
	fmt.Fprintf(out, "[SC] %s FAILED %d:\r\n\r\n%s\r\n\r\n", api, se.Err.Code, se.Err.Message)
	return se.Err.Code
}

func scUsage(out io.Writer, cmd string) int {
	fmt.Fprintf(out, "DESCRIPTION:\r\n        SC is a command line program used for communicating with the\r\n        Service Control Manager and services.\r\n(winsim: sc.exe %s could not parse its arguments; the full usage text is not reproduced)\r\n", cmd)
	return exitInvalidCommandLine
}

// scStatus prints a service's status as sc query (and queryex, with PID
// and FLAGS) does.
func scStatus(out io.Writer, s Service, ex bool) {
	state := map[string]string{StatusStopped: "1  STOPPED", StatusStartPending: "2  START_PENDING",
		StatusStopPending: "3  STOP_PENDING", StatusRunning: "4  RUNNING"}[s.Status]
	accepts := "(NOT_STOPPABLE, NOT_PAUSABLE, IGNORES_SHUTDOWN)"
	if s.Status == StatusRunning {
		accepts = "(STOPPABLE, NOT_PAUSABLE, ACCEPTS_SHUTDOWN)"
	}
	fmt.Fprintf(out, "\r\nSERVICE_NAME: %s\r\n        TYPE               : 10  WIN32_OWN_PROCESS  \r\n", s.Name)
	fmt.Fprintf(out, "        STATE              : %s\r\n                                %s\r\n", state, accepts)
	fmt.Fprint(out, "        WIN32_EXIT_CODE    : 0  (0x0)\r\n        SERVICE_EXIT_CODE  : 0  (0x0)\r\n        CHECKPOINT         : 0x0\r\n        WAIT_HINT          : 0x0\r\n")
	if ex {
		fmt.Fprint(out, "        PID                : 0\r\n        FLAGS              : \r\n")
	}
}
