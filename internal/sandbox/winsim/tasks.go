package winsim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// The Task Scheduler's COM API (New-Object -ComObject Schedule.Service), as
// far as a script that runs one program as LocalSystem uses it, the way
// Packer's elevated provisioners and ansible.windows' win_updates do:
// Connect(), GetFolder('\'), NewTask(0) with one Actions.Create(0)
// (TASK_ACTION_EXEC: Path, Arguments), RegisterTaskDefinition(name,
// definition, 6 TASK_CREATE_OR_UPDATE, 'SYSTEM', $null, 5
// TASK_LOGON_SERVICE_ACCOUNT), GetTask(name) (Name, State 3 ready or 4
// running, LastTaskResult: 0x41303 SCHED_S_TASK_HAS_NOT_RUN until it ran,
// then the program's exit code), Run($null) and DeleteTask(name, 0). The
// task runs its program with the system's token (not a network logon: the
// Windows Update Agent serves it), with no console. Registering needs an
// administrator (E_ACCESSDENIED otherwise). Other members, principals,
// flags and logon types are refused as not modelled. The tasks live as
// long as the host object (across guest restarts), not on the disk.
// Sources: ITaskService
// (https://learn.microsoft.com/en-us/windows/win32/api/taskschd/nn-taskschd-itaskservice),
// ITaskFolder::RegisterTaskDefinition
// (https://learn.microsoft.com/en-us/windows/win32/api/taskschd/nf-taskschd-itaskfolder-registertaskdefinition),
// TASK_STATE (https://learn.microsoft.com/en-us/windows/win32/api/taskschd/ne-taskschd-task_state),
// Task Scheduler error and success constants
// (https://learn.microsoft.com/en-us/windows/win32/taskschd/task-scheduler-error-and-success-constants).

const (
	taskStateReady     = 3
	taskStateRunning   = 4
	schedTaskNotRunYet = 0x41303
)

type schedTask struct {
	path, args string
	running    bool
	lastResult int
}

type taskTable struct {
	mu    sync.Mutex
	tasks map[string]*schedTask // by lower-case name
}

func (h *Host) taskService(ctx context.Context) *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{2faba4c7-4da9-4013-9697-20cc3fd40f85}")
	o.Set("Connected", false)
	method(o, "Connect", -1, func(a []any) (any, error) {
		if len(a) != 0 {
			return nil, pwsh.NotModelled("ITaskService.Connect to another computer or as another user")
		}
		o.Set("Connected", true)
		return nil, nil
	})
	method(o, "NewTask", 1, func(a []any) (any, error) {
		return newTaskDefinition(), nil
	})
	method(o, "GetFolder", 1, func(a []any) (any, error) {
		if pwsh.Text(a[0]) != `\` {
			return nil, pwsh.NotModelled("a task folder other than the root ('" + pwsh.Text(a[0]) + "')")
		}
		return h.taskFolder(ctx), nil
	})
	return o
}

func newTaskDefinition() *pwsh.Object {
	def := pwsh.NewObject("System.__ComObject#{f5bc8fc5-536d-4f77-b852-fbc1356fdeb6}")
	var actions []*pwsh.Object
	coll := pwsh.NewObject("System.__ComObject#{02820e19-7b98-4ed2-b2e8-fdccceff619b}")
	coll.Set("Count", 0)
	method(coll, "Create", 1, func(a []any) (any, error) {
		if a[0] != 0 {
			return nil, pwsh.NotModelled(fmt.Sprintf("a task action of type %v (only 0, TASK_ACTION_EXEC)", a[0]))
		}
		act := pwsh.NewObject("System.__ComObject#{4c3d624d-fd6b-49a3-b9b7-09cb3cd3f047}")
		act.Set("Path", "").Set("Arguments", "").Set("WorkingDirectory", "")
		actions = append(actions, act)
		coll.Set("Count", len(actions))
		return act, nil
	})
	coll.Native = &actions
	principal := pwsh.NewObject("System.__ComObject#{d98d51e5-c9b4-496a-a9c1-18980261cf0f}")
	principal.Set("UserId", "").Set("LogonType", 0).Set("RunLevel", 0)
	def.Set("Actions", coll).Set("Principal", principal)
	return def
}

func (h *Host) taskFolder(ctx context.Context) *pwsh.Object {
	o := pwsh.NewObject("System.__ComObject#{8cfac062-a080-4c15-9a88-aa7c2af80dfc}")
	o.Set("Name", `\`).Set("Path", `\`)
	method(o, "RegisterTaskDefinition", -1, func(a []any) (any, error) {
		if len(a) != 6 {
			return nil, pwsh.NotModelled(fmt.Sprintf("ITaskFolder.RegisterTaskDefinition with %d arguments", len(a)))
		}
		if !elevated(ctx) {
			return nil, comError(hrAccessDenied)
		}
		name := pwsh.Text(a[0])
		def, ok := a[1].(*pwsh.Object)
		if !ok {
			return nil, comError(hrInvalidArg)
		}
		user := strings.ToUpper(pwsh.Text(a[3]))
		if a[2] != 6 || a[4] != nil || a[5] != 5 || (user != "SYSTEM" && user != `NT AUTHORITY\SYSTEM` && user != "S-1-5-18") {
			return nil, pwsh.NotModelled("a task registered other than as SYSTEM (flags 6, no password, logon type 5)")
		}
		v, _ := def.Get("Actions")
		coll, _ := v.(*pwsh.Object)
		actions, ok := coll.Native.(*[]*pwsh.Object)
		if !ok || len(*actions) != 1 {
			return nil, pwsh.NotModelled("a task with other than one action")
		}
		path, _ := (*actions)[0].Get("Path")
		args, _ := (*actions)[0].Get("Arguments")
		h.tasks.mu.Lock()
		if h.tasks.tasks == nil {
			h.tasks.tasks = map[string]*schedTask{}
		}
		h.tasks.tasks[strings.ToLower(name)] = &schedTask{path: pwsh.Text(path), args: pwsh.Text(args), lastResult: schedTaskNotRunYet}
		h.tasks.mu.Unlock()
		return h.registeredTask(name)
	})
	method(o, "GetTask", 1, func(a []any) (any, error) { return h.registeredTask(pwsh.Text(a[0])) })
	method(o, "DeleteTask", 2, func(a []any) (any, error) {
		if !elevated(ctx) {
			return nil, comError(hrAccessDenied)
		}
		name := strings.ToLower(strings.TrimPrefix(pwsh.Text(a[0]), `\`))
		h.tasks.mu.Lock()
		defer h.tasks.mu.Unlock()
		if _, ok := h.tasks.tasks[name]; !ok {
			return nil, comError(hrFileNotFound)
		}
		// A running task goes on running once deleted (ansible's
		// win_updates relies on it).
		delete(h.tasks.tasks, name)
		return nil, nil
	})
	return o
}

// registeredTask is IRegisteredTask: a snapshot of the task now.
func (h *Host) registeredTask(name string) (any, error) {
	key := strings.ToLower(strings.TrimPrefix(name, `\`))
	h.tasks.mu.Lock()
	t, ok := h.tasks.tasks[key]
	if !ok {
		h.tasks.mu.Unlock()
		return nil, comError(hrFileNotFound)
	}
	state := taskStateReady
	if t.running {
		state = taskStateRunning
	}
	last := t.lastResult
	h.tasks.mu.Unlock()
	o := pwsh.NewObject("System.__ComObject#{9c86f320-dee3-4dd1-b972-a303f26b061e}")
	o.Set("Name", strings.TrimPrefix(name, `\`)).Set("Path", `\`+strings.TrimPrefix(name, `\`)).Set("State", state).Set("LastTaskResult", last)
	method(o, "Run", 1, func(a []any) (any, error) {
		if a[0] != nil {
			return nil, pwsh.NotModelled("IRegisteredTask.Run with parameters")
		}
		if err := h.runTask(t); err != nil {
			return nil, err
		}
		run := pwsh.NewObject("System.__ComObject#{653758fb-7b9a-4f1e-a471-beeb8e9b834e}")
		return run.Set("Name", o.Str).Set("State", taskStateRunning), nil
	})
	return o, nil
}

// runTask starts the task's program as LocalSystem, with no console.
func (h *Host) runTask(t *schedTask) error {
	h.mu.Lock()
	upCtx := h.upCtx
	h.mu.Unlock()
	if upCtx == nil || upCtx.Err() != nil {
		return comError(hrAccessDenied)
	}
	env := h.MachineEnv()
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = defaultPath
	}
	// LocalSystem's profile and temporary directory.
	env["USERPROFILE"], env["TEMP"], env["TMP"] = `C:\Windows\system32\config\systemprofile`, `C:\Windows\TEMP`, `C:\Windows\TEMP`
	exe, ok := h.resolveProgram(t.path, env)
	if !ok {
		return comError(hrFileNotFound)
	}
	h.tasks.mu.Lock()
	if t.running {
		h.tasks.mu.Unlock()
		return nil // MultipleInstancesPolicy IgnoreNew, the default
	}
	t.running = true
	h.tasks.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		code, err := h.runProgram(upCtx, exe, CommandLineToArgv(`"` + exe + `" ` + t.args)[1:], env, strings.NewReader(""), io.Discard, io.Discard)
		if err != nil {
			code = 1
		}
		h.tasks.mu.Lock()
		t.running, t.lastResult = false, code
		h.tasks.mu.Unlock()
	}()
	return nil
}
