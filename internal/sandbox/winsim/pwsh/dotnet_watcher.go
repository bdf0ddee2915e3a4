package pwsh

import (
	"strconv"
	"strings"
	"time"
)

// FileWatcher is a Host whose file changes can be waited for, which
// [System.IO.FileSystemWatcher] needs; on another host the type is refused.
type FileWatcher interface {
	// FileChanges returns a channel closed at the next change of the host's
	// files: one created (its content written), renamed or removed, or a
	// directory created.
	FileChanges() <-chan struct{}
}

// System.IO.FileSystemWatcher, as far as a script waiting for one file to
// appear uses it: ::new(path, filter) on an existing directory and a
// filter naming one file (wildcards are not modelled), WaitForChanged with
// Created and/or Renamed (a file that appears by either way counts; Changed
// and Deleted are not modelled) and a timeout in milliseconds, Dispose.
// Like .NET's, the wait sees what happens after it begins: a file already
// there is reported only once it has been removed and appears again, and a
// wait without a change ends with TimedOut.
// https://learn.microsoft.com/en-us/dotnet/api/system.io.filesystemwatcher
// https://learn.microsoft.com/en-us/dotnet/api/system.io.filesystemwatcher.waitforchanged
func init() {
	registerType(&dotnetType{Full: "System.IO.FileSystemWatcher", Names: []string{"IO.FileSystemWatcher"},
		Source:  "https://learn.microsoft.com/en-us/dotnet/api/system.io.filesystemwatcher",
		Methods: []string{"new", "equals", "referenceequals"},
		Static:  map[string]func(*Runtime, []any) (any, error){"new": newFileSystemWatcher}})
	registerType(&dotnetType{Full: "System.IO.WatcherChangeTypes", Names: []string{"IO.WatcherChangeTypes"},
		Source: "https://learn.microsoft.com/en-us/dotnet/api/system.io.watcherchangetypes",
		Props: map[string]func(*Runtime) (any, error){
			"created": func(*Runtime) (any, error) { return "Created", nil },
			"renamed": func(*Runtime) (any, error) { return "Renamed", nil },
		}})
}

func newFileSystemWatcher(r *Runtime, a []any) (any, error) {
	fw, ok := r.host.(FileWatcher)
	if !ok {
		return nil, &Terminating{Rec: errUnsupported("[System.IO.FileSystemWatcher] on this host"), Script: true}
	}
	if len(a) != 2 {
		// ::new() and ::new(path) watch every file ("*.*"): not modelled.
		return nil, &Terminating{Rec: errUnsupported("[System.IO.FileSystemWatcher]::new with " + strconv.Itoa(len(a)) + " arguments (only new(path, filter))"), Script: true}
	}
	dir := r.host.FullPath(argString(a[0]))
	filter := argString(a[1])
	if exists, isDir := r.host.Stat(dir); !exists || !isDir {
		return nil, dotnetErr("System.ArgumentException", "The directory name "+dir+" is invalid.")
	}
	if filter == "" || strings.ContainsAny(filter, `*?\/`) {
		return nil, &Terminating{Rec: errUnsupported("a FileSystemWatcher filter other than one file name ('" + filter + "')"), Script: true}
	}
	target := strings.TrimRight(dir, `\`) + `\` + filter
	o := NewObject("System.IO.FileSystemWatcher")
	o.Str = "System.IO.FileSystemWatcher"
	o.Set("Path", dir)
	o.Set("Filter", filter)
	o.Set("EnableRaisingEvents", false)
	o.Methods["waitforchanged"] = func(a []any) (any, error) {
		if len(a) != 1 && len(a) != 2 {
			return nil, errOverload("WaitForChanged", len(a))
		}
		kinds := map[string]bool{}
		for _, k := range strings.Split(toString(a[0]), ",") {
			kinds[strings.ToLower(strings.TrimSpace(k))] = true
		}
		if (!kinds["created"] && !kinds["renamed"]) || kinds["changed"] || kinds["deleted"] || kinds["all"] {
			return nil, &Terminating{Rec: errUnsupported("FileSystemWatcher.WaitForChanged for changes other than Created and Renamed ('" + toString(a[0]) + "')"), Script: true}
		}
		timeout := -1
		if len(a) == 2 {
			n, rec := toInteger(a[1])
			if rec != nil {
				return nil, &Terminating{Rec: rec, Script: true}
			}
			timeout = n
		}
		var expired <-chan time.Time
		if timeout >= 0 {
			t := time.NewTimer(time.Duration(timeout) * time.Millisecond)
			defer t.Stop()
			expired = t.C
		}
		present, _ := r.host.Stat(target)
		for {
			changed := fw.FileChanges()
			exists, _ := r.host.Stat(target)
			if exists && !present {
				kind := "Created"
				if !kinds["created"] {
					kind = "Renamed"
				}
				res := NewObject("System.IO.WaitForChangedResult")
				res.Set("ChangeType", kind)
				res.Set("Name", filter)
				res.Set("OldName", nil)
				return res.Set("TimedOut", false), nil
			}
			present = exists
			select {
			case <-changed:
			case <-expired:
				res := NewObject("System.IO.WaitForChangedResult")
				res.Set("ChangeType", "0")
				res.Set("Name", nil)
				res.Set("OldName", nil)
				return res.Set("TimedOut", true), nil
			case <-r.ctx.Done():
				return nil, r.ctx.Err()
			}
		}
	}
	o.Methods["dispose"] = func(a []any) (any, error) {
		if len(a) != 0 {
			return nil, errOverload("Dispose", len(a))
		}
		return nil, nil
	}
	return o, nil
}
