package winsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Service states and startup types, spelled as Get-Service prints them.
const (
	StatusRunning = "Running"
	StatusStopped = "Stopped"

	StartupAutomatic = "Automatic"
	StartupManual    = "Manual"
	StartupDisabled  = "Disabled"
)

// serviceTable is the host's service control manager. It is saved to
// <Dir>/services.json on every change so it survives reboots and can be read.
type serviceTable struct {
	mu   sync.Mutex
	path string
	svcs map[string]*Service // by lower-case name
}

func loadServices(path string) (*serviceTable, error) {
	t := &serviceTable{path: path, svcs: map[string]*Service{}}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	var list []Service
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for i := range list {
		t.svcs[strings.ToLower(list[i].Name)] = &list[i]
	}
	return t, nil
}

func (t *serviceTable) saveLocked() error {
	list := t.listLocked()
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(t.path, b, 0o644)
}

func (t *serviceTable) listLocked() []Service {
	list := make([]Service, 0, len(t.svcs))
	for _, s := range t.svcs {
		list = append(list, *s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

func (t *serviceTable) list() []Service {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.listLocked()
}

func (t *serviceTable) get(name string) (Service, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.svcs[strings.ToLower(name)]
	if !ok {
		return Service{}, false
	}
	return *s, true
}

func noService(name string) error {
	return fmt.Errorf("Cannot find any service with service name '%s'.", name)
}

func (t *serviceTable) create(s Service) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := strings.ToLower(s.Name)
	if _, ok := t.svcs[key]; ok {
		return fmt.Errorf("Service '%s' cannot be created due to the following error: The specified service already exists", s.Name)
	}
	if s.DisplayName == "" {
		s.DisplayName = s.Name
	}
	if s.StartupType == "" {
		s.StartupType = StartupAutomatic
	}
	s.Status = StatusStopped
	t.svcs[key] = &s
	return t.saveLocked()
}

func (t *serviceTable) update(name string, fn func(*Service) error) (Service, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.svcs[strings.ToLower(name)]
	if !ok {
		return Service{}, noService(name)
	}
	if err := fn(s); err != nil {
		return *s, err
	}
	return *s, t.saveLocked()
}

func (t *serviceTable) remove(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := strings.ToLower(name)
	if _, ok := t.svcs[key]; !ok {
		return noService(name)
	}
	delete(t.svcs, key)
	return t.saveLocked()
}
