package winsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Windows feature states, as Get-WindowsFeature's InstallState says them.
const (
	FeatureInstalled      = "Installed"
	FeatureInstallPending = "InstallPending" // installed, takes effect at the next boot
)

// featureTable is the host's optional features (Install-WindowsFeature),
// saved to <Dir>/features.json. A feature that needs a restart stays
// InstallPending until the next boot.
type featureTable struct {
	mu    sync.Mutex
	path  string
	state map[string]string // lower-case name -> state
}

func loadFeatures(path string) (*featureTable, error) {
	t := &featureTable{path: path, state: map[string]string{}}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	return t, json.Unmarshal(b, &t.state)
}

func (t *featureTable) get(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state[strings.ToLower(name)]
}

// install marks a feature installed pending a restart; it reports whether a
// restart is needed (false when the feature was already installed).
func (t *featureTable) install(name string) (restartNeeded bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.state[strings.ToLower(name)] {
	case FeatureInstalled:
		return false, nil
	case FeatureInstallPending:
		return true, nil
	}
	t.state[strings.ToLower(name)] = FeatureInstallPending
	return true, t.saveLocked()
}

// boot completes pending installs, as Windows does while it starts.
func (t *featureTable) boot() {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := false
	for k, v := range t.state {
		if v == FeatureInstallPending {
			t.state[k] = FeatureInstalled
			changed = true
		}
	}
	if changed {
		_ = t.saveLocked()
	}
}

func (t *featureTable) saveLocked() error {
	b, err := json.MarshalIndent(t.state, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(t.path, b, 0o644)
}

// FeatureInstalled reports whether a Windows feature is installed and in
// effect (Get-WindowsFeature's Installed; an install pending a restart is
// not).
func (h *Host) FeatureInstalled(name string) bool { return h.features.get(name) == FeatureInstalled }
