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

// Registry value types, spelled as reg.exe and the registry editor print them.
const (
	RegSZ       = "REG_SZ"
	RegExpandSZ = "REG_EXPAND_SZ"
	RegMultiSZ  = "REG_MULTI_SZ"
	RegDWord    = "REG_DWORD"
	RegBinary   = "REG_BINARY"
)

// Registry keys the simulator gives meaning to.
const (
	// MachineEnvironmentKey holds the machine-scope environment variables:
	// what [Environment]::SetEnvironmentVariable(n, v, 'Machine') writes
	// (https://learn.microsoft.com/dotnet/api/system.environment.setenvironmentvariable,
	// "stored in the HKEY_LOCAL_MACHINE\System\CurrentControlSet\Control\Session Manager\Environment key").
	MachineEnvironmentKey = `HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment`
	// ServicesKey holds one subkey per service: the service control
	// manager's database (https://learn.microsoft.com/windows-hardware/drivers/install/hklm-system-currentcontrolset-services-registry-tree).
	ServicesKey = `HKLM\SYSTEM\CurrentControlSet\Services`
)

// RegValue is one registry value. Str holds REG_SZ and REG_EXPAND_SZ data,
// Multi REG_MULTI_SZ, DWord REG_DWORD, Bin REG_BINARY.
type RegValue struct {
	Type  string   `json:"type"`
	Str   string   `json:"str,omitempty"`
	Multi []string `json:"multi,omitempty"`
	DWord uint32   `json:"dword,omitempty"`
	Bin   []byte   `json:"bin,omitempty"`
}

// String renders the value as Get-ItemProperty shows it (multi-strings one
// per line).
func (v RegValue) String() string {
	switch v.Type {
	case RegMultiSZ:
		return strings.Join(v.Multi, "\r\n")
	case RegDWord:
		return fmt.Sprint(v.DWord)
	case RegBinary:
		parts := make([]string, len(v.Bin))
		for i, b := range v.Bin {
			parts[i] = fmt.Sprint(b)
		}
		return strings.Join(parts, " ")
	}
	return v.Str
}

// regKey is one key: its path as created and its values by lower-case name
// (registry names are case-insensitive and case-preserving).
type regKey struct {
	Path   string               `json:"path"`
	Values map[string]*regEntry `json:"values"`
}

type regEntry struct {
	Name string `json:"name"`
	RegValue
}

// registry is the host's HKEY_LOCAL_MACHINE, saved to <Dir>/registry.json on
// every change: it survives reboots and is part of the disk a clone copies
// (internal/sandbox/vmtools/disk.go), as the hive files under
// C:\Windows\System32\config are on Windows.
type registry struct {
	mu   sync.Mutex
	path string
	keys map[string]*regKey // by normalised lower-case path
}

// normKey turns "HKLM:\X\Y\" or "HKEY_LOCAL_MACHINE\X\Y" into "HKLM\X\Y".
func normKey(path string) string {
	p := strings.Trim(strings.ReplaceAll(path, "/", `\`), `\`)
	for _, prefix := range []string{"HKEY_LOCAL_MACHINE", "HKLM:", "Registry::HKEY_LOCAL_MACHINE", "Microsoft.PowerShell.Core\\Registry::HKEY_LOCAL_MACHINE"} {
		if len(p) >= len(prefix) && strings.EqualFold(p[:len(prefix)], prefix) {
			p = "HKLM" + p[len(prefix):]
			break
		}
	}
	for strings.Contains(p, `\\`) {
		p = strings.ReplaceAll(p, `\\`, `\`)
	}
	return p
}

func loadRegistry(path string) (*registry, error) {
	r := &registry{path: path, keys: map[string]*regKey{}}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	var list []*regKey
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for _, k := range list {
		if k.Values == nil {
			k.Values = map[string]*regEntry{}
		}
		r.keys[strings.ToLower(normKey(k.Path))] = k
	}
	return r, nil
}

func (r *registry) saveLocked() error {
	list := make([]*regKey, 0, len(r.keys))
	for _, k := range r.keys {
		list = append(list, k)
	}
	sort.Slice(list, func(i, j int) bool { return strings.ToLower(list[i].Path) < strings.ToLower(list[j].Path) })
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return err
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

// createKeyLocked creates a key and its parents, as RegCreateKeyEx does.
func (r *registry) createKeyLocked(path string) *regKey {
	path = normKey(path)
	parts := strings.Split(path, `\`)
	var k *regKey
	for i := range parts {
		p := strings.Join(parts[:i+1], `\`)
		lk := strings.ToLower(p)
		if k = r.keys[lk]; k == nil {
			k = &regKey{Path: p, Values: map[string]*regEntry{}}
			r.keys[lk] = k
		}
	}
	return k
}

// createKey creates a key (and parents); an existing key is kept.
func (r *registry) createKey(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.createKeyLocked(path)
	return r.saveLocked()
}

// keyExists reports whether a key exists.
func (r *registry) keyExists(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.keys[strings.ToLower(normKey(path))]
	return ok
}

// get returns one value; name "" is the key's default value.
func (r *registry) get(path, name string) (RegValue, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[strings.ToLower(normKey(path))]
	if !ok {
		return RegValue{}, false
	}
	e, ok := k.Values[strings.ToLower(name)]
	if !ok {
		return RegValue{}, false
	}
	v := e.RegValue
	v.Multi = append([]string(nil), v.Multi...)
	return v, true
}

// getString returns a string value's data ("" when missing).
func (r *registry) getString(path, name string) string {
	v, _ := r.get(path, name)
	return v.String()
}

// values returns a key's values by name (as created); ok is false when the
// key does not exist.
func (r *registry) values(path string) (map[string]RegValue, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[strings.ToLower(normKey(path))]
	if !ok {
		return nil, false
	}
	out := make(map[string]RegValue, len(k.Values))
	for _, e := range k.Values {
		out[e.Name] = e.RegValue
	}
	return out, true
}

// set writes a value, creating the key as needed.
func (r *registry) set(path, name string, v RegValue) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setLocked(path, name, v)
	return r.saveLocked()
}

func (r *registry) setLocked(path, name string, v RegValue) {
	k := r.createKeyLocked(path)
	v.Multi = append([]string(nil), v.Multi...)
	if e, ok := k.Values[strings.ToLower(name)]; ok {
		e.RegValue = v
		return
	}
	k.Values[strings.ToLower(name)] = &regEntry{Name: name, RegValue: v}
}

// setMany writes several values of one key in one save.
func (r *registry) setMany(path string, vals map[string]RegValue) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n, v := range vals {
		r.setLocked(path, n, v)
	}
	return r.saveLocked()
}

// deleteValue removes a value; ok is false when there was none.
func (r *registry) deleteValue(path, name string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[strings.ToLower(normKey(path))]
	if !ok {
		return false, nil
	}
	if _, ok := k.Values[strings.ToLower(name)]; !ok {
		return false, nil
	}
	delete(k.Values, strings.ToLower(name))
	return true, r.saveLocked()
}

// deleteKey removes a key and its subkeys (Remove-Item -Recurse, RegDeleteTree).
func (r *registry) deleteKey(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	lk := strings.ToLower(normKey(path))
	for k := range r.keys {
		if k == lk || strings.HasPrefix(k, lk+`\`) {
			delete(r.keys, k)
		}
	}
	return r.saveLocked()
}

// subkeys lists the names of a key's direct subkeys, sorted.
func (r *registry) subkeys(path string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	prefix := strings.ToLower(normKey(path)) + `\`
	var out []string
	for lk, k := range r.keys {
		if strings.HasPrefix(lk, prefix) && !strings.Contains(lk[len(prefix):], `\`) {
			out = append(out, k.Path[len(prefix):])
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out
}

// RegistryValue reads a value of the host's HKEY_LOCAL_MACHINE (key as
// "HKLM\..." or "HKLM:\...").
func (h *Host) RegistryValue(key, name string) (RegValue, bool) { return h.reg.get(key, name) }

// SetRegistryValue writes a value of the host's HKEY_LOCAL_MACHINE, creating
// the key (New-ItemProperty / Set-ItemProperty / reg.exe add).
func (h *Host) SetRegistryValue(key, name string, v RegValue) error { return h.reg.set(key, name, v) }

// seedRegistry writes what a Windows installation holds: the build under
// CurrentVersion (from the VM's configuration, at every boot, as an update
// would rewrite it) and, once, the default machine environment.
func (h *Host) seedRegistry() error {
	cv := map[string]RegValue{}
	for n, v := range h.currentVersionValues() {
		cv[n] = RegValue{Type: RegSZ, Str: v}
	}
	// UBR and the major/minor numbers are REG_DWORDs on Windows.
	cv["UBR"] = RegValue{Type: RegDWord, DWord: uint32(h.UBR())} // the installed updates' (servicing.go)
	cv["CurrentMajorVersionNumber"] = RegValue{Type: RegDWord, DWord: 10}
	cv["CurrentMinorVersionNumber"] = RegValue{Type: RegDWord, DWord: 0}
	if err := h.reg.setMany(CurrentVersionKey, cv); err != nil {
		return err
	}
	if h.reg.keyExists(MachineEnvironmentKey) {
		return nil
	}
	// The machine environment of a fresh Windows Server installation.
	env := map[string]RegValue{
		"ComSpec":                {Type: RegExpandSZ, Str: `%SystemRoot%\system32\cmd.exe`},
		"DriverData":             {Type: RegSZ, Str: `C:\Windows\System32\Drivers\DriverData`},
		"NUMBER_OF_PROCESSORS":   {Type: RegSZ, Str: fmt.Sprint(h.cfg.NumCPU)},
		"OS":                     {Type: RegSZ, Str: "Windows_NT"},
		"Path":                   {Type: RegExpandSZ, Str: `%SystemRoot%\system32;%SystemRoot%;%SystemRoot%\System32\Wbem;%SYSTEMROOT%\System32\WindowsPowerShell\v1.0\;%SYSTEMROOT%\System32\OpenSSH\`},
		"PATHEXT":                {Type: RegSZ, Str: ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"},
		"PROCESSOR_ARCHITECTURE": {Type: RegSZ, Str: "AMD64"},
		"PSModulePath":           {Type: RegExpandSZ, Str: `%ProgramFiles%\WindowsPowerShell\Modules;%SystemRoot%\system32\WindowsPowerShell\v1.0\Modules`},
		"TEMP":                   {Type: RegExpandSZ, Str: `%SystemRoot%\TEMP`},
		"TMP":                    {Type: RegExpandSZ, Str: `%SystemRoot%\TEMP`},
		"USERNAME":               {Type: RegSZ, Str: "SYSTEM"},
		"windir":                 {Type: RegExpandSZ, Str: `%SystemRoot%`},
	}
	return h.reg.setMany(MachineEnvironmentKey, env)
}

// MachineEnv returns the machine-scope environment variables as the registry
// holds them now (REG_EXPAND_SZ values expanded against the machine
// environment itself and the system variables).
func (h *Host) MachineEnv() map[string]string {
	vals, _ := h.reg.values(MachineEnvironmentKey)
	base := map[string]string{
		"SYSTEMROOT": `C:\Windows`, "SYSTEMDRIVE": "C:", "PROGRAMFILES": `C:\Program Files`,
		"PROGRAMDATA": `C:\ProgramData`, "COMPUTERNAME": h.cfg.ComputerName,
	}
	out := map[string]string{}
	for n, v := range vals {
		if v.Type != RegExpandSZ {
			out[strings.ToUpper(n)] = v.String()
		}
	}
	for k, v := range base {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	for n, v := range vals {
		if v.Type == RegExpandSZ {
			out[strings.ToUpper(n)] = expandPercent(v.Str, out)
		}
	}
	return out
}

// SetMachineEnv is [Environment]::SetEnvironmentVariable(name, value,
// 'Machine'): it writes the registry (REG_SZ; an empty value deletes the
// variable, as .NET does). Running processes, the service control manager
// included, keep the environment they started with: services see the
// change after the next reboot (the SCM builds its environment block once,
// at boot: https://learn.microsoft.com/windows/win32/procthread/environment-variables,
// "... the service control manager ... does not receive WM_SETTINGCHANGE").
func (h *Host) SetMachineEnv(name, value string) error {
	if value == "" {
		_, err := h.reg.deleteValue(MachineEnvironmentKey, name)
		return err
	}
	// A variable already stored as REG_EXPAND_SZ keeps its type only when
	// written through the registry; .NET writes REG_SZ.
	return h.reg.set(MachineEnvironmentKey, name, RegValue{Type: RegSZ, Str: value})
}

// expandPercent expands %NAME% references from env (upper-case names);
// unknown references stay as written, as ExpandEnvironmentStrings does.
func expandPercent(s string, env map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '%')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+1 : i+1+j]
		if v, ok := env[strings.ToUpper(name)]; ok && name != "" {
			b.WriteString(s[:i])
			b.WriteString(v)
			s = s[i+2+j:]
			continue
		}
		b.WriteString(s[:i+1+j])
		s = s[i+1+j:]
	}
}
