package winsim

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// nssmService is nssm running as the service p.Service.
func nssmService(ctx context.Context, p *Process) int {
	h := p.Host
	key := nssmParams(p.Service)
	throttle := 0
	reported := false
	report := func() {
		if !reported {
			reported = true
			p.ServiceRunning()
		}
	}
	for {
		params, _ := h.reg.values(key)
		num := func(n string, def uint32) uint32 {
			for k, v := range params {
				if strings.EqualFold(k, n) && v.Type == RegDWord {
					return v.DWord
				}
			}
			return def
		}
		str := func(n string) string {
			for k, v := range params {
				if strings.EqualFold(k, n) {
					return expandPercent(v.String(), p.Env)
				}
			}
			return ""
		}
		app := str("Application")
		if app == "" {
			return 3 // get_parameters fails: the service stops
		}
		restartDelay := time.Duration(num("AppRestartDelay", 0)) * time.Millisecond
		throttleDelay := time.Duration(num("AppThrottle", 1500)) * time.Millisecond
		// throttle_restart: the first start does not wait; a restart waits
		// AppRestartDelay or the back-off 2^(throttle-1) s, whichever is longer.
		if old := throttle; old == 0 {
			throttle = 1
		} else {
			throttle++
			wait := max(time.Duration(1<<(min(throttle, 8)-1))*time.Second, restartDelay)
			throttle = min(throttle, 8)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return 0
			}
		}
		dir := str("AppDirectory")
		if dir == "" {
			dir = app[:max(strings.LastIndexAny(app, `\/`), 0)]
		}
		env := map[string]string{}
		if multi, ok := h.reg.get(key, "AppEnvironment"); ok && len(multi.Multi) > 0 {
			addEnv(env, multi.Multi)
		} else {
			for k, v := range p.Env {
				env[k] = v
			}
		}
		if extra, ok := h.reg.get(key, "AppEnvironmentExtra"); ok {
			addEnv(env, extra.Multi)
		}
		rot := nssmRotation{on: num("AppRotateFiles", 0) != 0, online: num("AppRotateOnline", 0) != 0,
			seconds: num("AppRotateSeconds", 0), bytes: int64(num("AppRotateBytes", 0)) | int64(num("AppRotateBytesHigh", 0))<<32}
		stdout := h.nssmOutput(str("AppStdout"), rot)
		stderr := stdout
		if e := str("AppStderr"); !strings.EqualFold(e, str("AppStdout")) {
			stderr = h.nssmOutput(e, rot)
		} else if nf, ok := stdout.(*nssmFile); ok {
			nf.refs++ // one handle duplicated for both streams
		}
		child := &Process{Path: app, Args: CommandLineToArgv(str("AppParameters")), Env: env, Dir: dir,
			Stdout: stdout, Stderr: stderr}
		program, version, err := h.ResolveProgram(app)
		var run Program
		if err == nil {
			var ok bool
			if run, ok = h.program(program); !ok {
				err = fmt.Errorf("not modelled")
			}
		}
		if err != nil {
			_ = stdout.Close() // the app did not start; nothing was written
			_ = stderr.Close()
			return 3 // CreateProcess failed: stop_service(service, 3, ...)
		}
		child.Host, child.Program, child.Version, child.Stdin = h, program, version, strings.NewReader("")
		childCtx, cancel := context.WithCancel(ctx)
		done := make(chan int, 1)
		started := time.Now()
		go func() { done <- run(childCtx, child) }()
		// Report Running after a clean start, waiting at most AppThrottle
		// (and never more than NSSM_SERVICE_STATUS_DEADLINE, 20 s).
		var code int
		exited := false
		select {
		case code = <-done:
			exited = true
		case <-time.After(min(throttleDelay, 20*time.Second)):
		case <-ctx.Done():
		}
		report()
		if !exited && time.Since(started) >= throttleDelay {
			throttle = 0 // a clean start resets the back-off
		}
		if restartDelay > 0 && throttle == 0 {
			throttle = 1 // "Ensure the restart delay is always applied."
		}
		if !exited {
			select {
			case code = <-done:
			case <-ctx.Done():
				cancel()
				<-done
				_ = stdout.Close() // the service stops; its log has no one to report to
				_ = stderr.Close()
				return 0
			}
		}
		cancel()
		_ = stdout.Close() // the service stops; its log has no one to report to
		_ = stderr.Close()
		// end_service: AppExit\<code>, else AppExit's default (Restart).
		action := h.reg.getString(key+`\AppExit`, strconv.Itoa(code))
		if action == "" {
			action = h.reg.getString(key+`\AppExit`, "")
		}
		switch strings.ToLower(action) {
		case "ignore":
			<-ctx.Done()
			return 0
		case "exit", "suicide":
			return code
		}
	}
}

func addEnv(env map[string]string, kvs []string) {
	for _, kv := range kvs {
		if i := strings.IndexByte(kv, '='); i > 0 {
			env[strings.ToUpper(kv[:i])] = kv[i+1:]
		}
	}
}

type nssmRotation struct {
	on, online bool
	seconds    uint32
	bytes      int64
}

// nssmFile is a redirected stdout/stderr: appended to, rotated online when
// asked, or discarding when the file could not be opened.
type nssmFile struct {
	mu   sync.Mutex
	h    *Host
	path string
	rot  nssmRotation
	f    *os.File
	refs int
}

func (f *nssmFile) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return len(b), nil // nssm 2.24 runs the app with an unusable handle
	}
	if f.rot.on && f.rot.online && f.rot.bytes > 0 {
		if st, err := f.f.Stat(); err == nil && st.Size()+int64(len(b)) >= f.rot.bytes {
			_ = f.f.Close() // the file is rotated and reopened next
			disk := f.h.fs.resolve(f.path)
			_ = os.Rename(disk, f.h.fs.resolve(nssmRotatedName(f.path, time.Now())))
			f.f, _ = os.OpenFile(disk, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if f.f == nil {
				return len(b), nil
			}
		}
	}
	return f.f.Write(b)
}

func (f *nssmFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refs--
	if f.refs <= 0 && f.f != nil {
		err := f.f.Close()
		f.f = nil
		return err
	}
	return nil
}

type writeCloser interface {
	io.Writer
	Close() error
}

type discardCloser struct{}

func (discardCloser) Write(b []byte) (int, error) { return len(b), nil }
func (discardCloser) Close() error                { return nil }

// nssmOutput opens AppStdout/AppStderr as get_output_handles does.
func (h *Host) nssmOutput(path string, rot nssmRotation) writeCloser {
	if path == "" {
		return discardCloser{} // no redirection: the console nssm allocated
	}
	disk := h.fs.resolve(path)
	if rot.on {
		if st, err := os.Stat(disk); err == nil && !st.IsDir() {
			old := rot.seconds == 0 || time.Since(st.ModTime()) >= time.Duration(rot.seconds)*time.Second
			big := rot.bytes == 0 || st.Size() >= rot.bytes
			if old && big {
				_ = os.Rename(disk, h.fs.resolve(nssmRotatedName(path, st.ModTime())))
			}
		}
	}
	nf := &nssmFile{h: h, path: path, rot: rot, refs: 1}
	if st, err := os.Stat(filepath.Dir(disk)); err == nil && st.IsDir() {
		nf.f, _ = os.OpenFile(disk, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	return nf
}

// nssmRotatedName is rotated_filename: <path without extension>-YYYYMMDDTHHMMSS.mmm<extension>, UTC.
func nssmRotatedName(path string, t time.Time) string {
	t = t.UTC()
	base := path[strings.LastIndexAny(path, `\/`)+1:]
	ext := ""
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		ext = base[i:]
	}
	stem := strings.TrimSuffix(path, ext)
	return fmt.Sprintf("%s-%04d%02d%02dT%02d%02d%02d.%03d%s", stem, t.Year(), t.Month(), t.Day(),
		t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1e6, ext)
}
