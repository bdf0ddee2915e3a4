package winsim

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// ServiceStartMode's names (System.ServiceProcess.ServiceStartMode), what
// New-Service and Set-Service -StartupType bind to in Windows PowerShell 5.1.
var serviceStartModes = []string{"Boot", "System", "Automatic", "Manual", "Disabled"}

const startModeType = "System.ServiceProcess.ServiceStartMode"

func serviceObject(s Service) *pwsh.Object {
	o := NewObject("System.ServiceProcess.ServiceController")
	o.Str = fmt.Sprintf("%-8s %-18s %s", s.Status, s.Name, s.DisplayName)
	return o.Set("Status", s.Status).Set("Name", s.Name).Set("DisplayName", s.DisplayName).Set("ServiceName", s.Name).
		Set("StartType", s.StartupType).Set("CanStop", s.Status == StatusRunning).Set("ServiceType", "Win32OwnProcess")
}

func noServiceErr(c *Call, name string) error {
	return c.Error(c.Fail(fmt.Sprintf("Cannot find any service with service name '%s'.", name), "ObjectNotFound", name,
		"ServiceCommandException", "NoServiceFoundForGivenName", "Microsoft.PowerShell.Commands.ServiceCommandException"))
}

func wildcard(p string) *regexp.Regexp {
	q := regexp.QuoteMeta(p)
	q = strings.ReplaceAll(strings.ReplaceAll(q, `\*`, ".*"), `\?`, ".")
	return regexp.MustCompile("(?i)^" + q + "$")
}

// namedServices resolves -Name values (wildcards allowed); a name without
// wildcards that matches nothing is an error.
func namedServices(c *Call) ([]Service, error) {
	h := ps(c).h
	var out []Service
	for _, n := range c.Strs("Name") {
		if strings.ContainsAny(n, "*?") {
			re := wildcard(n)
			for _, s := range h.svcs.list() {
				if re.MatchString(s.Name) {
					out = append(out, s)
				}
			}
			continue
		}
		s, ok := h.svcs.get(n)
		if !ok {
			if err := noServiceErr(c, n); err != nil {
				return out, err
			}
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

func svcDoc(name string) string { return mgmt + strings.ToLower(name) + "?view=powershell-5.1" }

// serviceSelect are the parameters that pick the services of Start-,
// Stop- and Restart-Service (ServiceOperationBaseCommand): each of -Name
// ("Default"), -DisplayName and -InputObject is mandatory in its own
// parameter set, the default set being "InputObject"; so two of them is
// AmbiguousParameterSet. -InputObject is position 0 on Windows too; here
// it has none, since the binder does not try a second parameter when a
// string fails to convert to a ServiceController.
func serviceSelect(extra ...*Param) []*Param {
	return append([]*Param{P("Name", "System.String[]", 0, Mandatory, Pipeline, Alias("ServiceName"), In("Default")),
		P("DisplayName", "System.String[]", -1, In("DisplayName"), Mandatory, Unmodelled), P("InputObject", "System.ServiceProcess.ServiceController[]", -1, In("InputObject"), Mandatory, Pipeline, Unmodelled),
		P("PassThru", "SwitchParameter", -1, Unmodelled), P("Include", "System.String[]", -1, Unmodelled), P("Exclude", "System.String[]", -1, Unmodelled)}, extra...)
}

func serviceCmdlets() []*Cmdlet {
	return []*Cmdlet{
		{Name: "Get-Service", Class: "Microsoft.PowerShell.Commands.GetServiceCommand", Aliases: []string{"gsv"},
			Source: svcDoc("Get-Service"), Behaviour: "the services of the host's service control manager (wildcards); a missing name is an error (NoServiceFoundForGivenName)",
			// GetServiceCommand: sets "Default" (the default: -Name),
			// "DisplayName" and "InputObject".
			DefaultSet: "Default",
			Params: []*Param{P("Name", "System.String[]", 0, Pipeline, Alias("ServiceName"), In("Default")), P("DisplayName", "System.String[]", -1, In("DisplayName"), Mandatory, Unmodelled),
				P("Include", "System.String[]", -1, Unmodelled), P("Exclude", "System.String[]", -1, Unmodelled),
				P("InputObject", "System.ServiceProcess.ServiceController[]", -1, In("InputObject"), Pipeline, Unmodelled), P("ComputerName", "System.String[]", -1, Alias("Cn"), Unmodelled),
				P("DependentServices", "SwitchParameter", -1, Alias("DS"), Unmodelled), P("RequiredServices", "SwitchParameter", -1, Alias("SDO", "ServicesDependedOn"), Unmodelled)},
			Run: func(c *Call) error {
				if !c.Has("Name") {
					for _, s := range ps(c).h.svcs.list() {
						c.Write(serviceObject(s))
					}
					return nil
				}
				list, err := namedServices(c)
				for _, s := range list {
					c.Write(serviceObject(s))
				}
				return err
			}},
		{Name: "New-Service", Class: "Microsoft.PowerShell.Commands.NewServiceCommand", ShouldProcess: true,
			Source: svcDoc("New-Service"), Behaviour: "creates a stopped service in the service control manager with its -DisplayName and -Description (the Description value of its registry key); Boot and System start modes are refused by the SCM for a Win32 service",
			Params: []*Param{P("Name", "System.String", 0, Mandatory, Alias("ServiceName")), P("BinaryPathName", "System.String", 1, Mandatory, Alias("Path")),
				P("DisplayName", "System.String", -1), P("Description", "System.String", -1),
				P("StartupType", startModeType, -1, Enum(serviceStartModes...)),
				P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled), P("DependsOn", "System.String[]", -1, Unmodelled)},
			Run: func(c *Call) error {
				h := ps(c).h
				name := c.Str("Name")
				st := c.Str("StartupType")
				if st == "" {
					st = StartupAutomatic
				}
				if st == "Boot" || st == "System" {
					return c.Error(c.Fail(fmt.Sprintf("Service '%s' cannot be created due to the following error: The parameter is incorrect", name),
						"PermissionDenied", name, "ServiceCommandException", "CouldNotNewService", "Microsoft.PowerShell.Commands.ServiceCommandException"))
				}
				// -Description is the service's description, stored where
				// the SCM keeps it (the Description value of its registry
				// key, ChangeServiceConfig2 SERVICE_CONFIG_DESCRIPTION),
				// read back from the registry (Get-ItemProperty on
				// HKLM:\SYSTEM\CurrentControlSet\Services\<name>).
				s := Service{Name: name, DisplayName: c.Str("DisplayName"), Description: c.Str("Description"), BinaryPathName: c.Str("BinaryPathName"), StartupType: st}
				if err := h.svcs.create(s); err != nil {
					return c.Error(c.Fail(err.Error(), "PermissionDenied", name, "ServiceCommandException", "CouldNotNewService", "Microsoft.PowerShell.Commands.ServiceCommandException"))
				}
				got, _ := h.svcs.get(name)
				c.Write(serviceObject(got))
				return nil
			}},
		{Name: "Set-Service", Class: "Microsoft.PowerShell.Commands.SetServiceCommand", ShouldProcess: true,
			Source: svcDoc("Set-Service"), Behaviour: "changes -StartupType, -DisplayName, -Description; -Status Running/Stopped starts or stops it",
			Params: []*Param{P("Name", "System.String", 0, Mandatory, Pipeline, Alias("ServiceName", "SN")), P("DisplayName", "System.String", -1, Alias("DN")),
				P("Description", "System.String", -1), P("StartupType", startModeType, -1, Alias("StartMode", "SM", "ST"), Enum(serviceStartModes...)),
				P("Status", "System.String", -1, Set("Running", "Stopped", "Paused")), P("InputObject", "System.ServiceProcess.ServiceController", -1, Unmodelled),
				P("ComputerName", "System.String[]", -1, Alias("cn"), Unmodelled), P("PassThru", "SwitchParameter", -1, Unmodelled)},
			Run: func(c *Call) error {
				h := ps(c).h
				name := c.Str("Name")
				if _, ok := h.svcs.get(name); !ok {
					return c.Error(c.Fail(fmt.Sprintf("Service %s was not found on computer '.'.", name), "ObjectNotFound", ".",
						"InvalidOperationException", "InvalidOperationException", "System.InvalidOperationException"))
				}
				if st := c.Str("StartupType"); st == "Boot" || st == "System" {
					return c.Error(c.Fail(fmt.Sprintf("Service '%s (%s)' cannot be configured due to the following error: The parameter is incorrect", name, name),
						"PermissionDenied", name, "ServiceCommandException", "CouldNotSetService", "Microsoft.PowerShell.Commands.ServiceCommandException"))
				}
				_, err := h.svcs.update(name, func(s *Service) error {
					if c.Has("StartupType") {
						s.StartupType = c.Str("StartupType")
					}
					if c.Has("DisplayName") {
						s.DisplayName = c.Str("DisplayName")
					}
					if c.Has("Description") {
						s.Description = c.Str("Description")
					}
					return nil
				})
				if err != nil {
					return c.Error(c.Fail(err.Error(), "ObjectNotFound", name, "ServiceCommandException", "CouldNotSetService", "Microsoft.PowerShell.Commands.ServiceCommandException"))
				}
				switch c.Str("Status") {
				case "Running":
					return startOne(c, name)
				case "Stopped":
					return stopOne(c, name)
				case "Paused":
					return c.Unmodelled("-Status Paused")
				}
				return nil
			}},
		{Name: "Start-Service", Class: "Microsoft.PowerShell.Commands.StartServiceCommand", Aliases: []string{"sasv"}, ShouldProcess: true,
			Source: svcDoc("Start-Service"), Behaviour: "starts the service through the service control manager; a failure is CouldNotStartService with the SCM's reason",
			DefaultSet: "InputObject", Params: serviceSelect(),
			Run: func(c *Call) error { return eachService(c, startOne) }},
		{Name: "Stop-Service", Class: "Microsoft.PowerShell.Commands.StopServiceCommand", Aliases: []string{"spsv"}, ShouldProcess: true,
			Source: svcDoc("Stop-Service"), Behaviour: "stops the service",
			DefaultSet: "InputObject", Params: serviceSelect(P("Force", "SwitchParameter", -1), P("NoWait", "SwitchParameter", -1, Unmodelled)),
			Run: func(c *Call) error { return eachService(c, stopOne) }},
		{Name: "Restart-Service", Class: "Microsoft.PowerShell.Commands.RestartServiceCommand", ShouldProcess: true,
			Source: svcDoc("Restart-Service"), Behaviour: "stops then starts the service",
			DefaultSet: "InputObject", Params: serviceSelect(P("Force", "SwitchParameter", -1)),
			Run: func(c *Call) error {
				return eachService(c, func(c *Call, n string) error {
					if err := stopOne(c, n); err != nil {
						return err
					}
					return startOne(c, n)
				})
			}},
	}
}

func eachService(c *Call, fn func(*Call, string) error) error {
	list, err := namedServices(c)
	if err != nil {
		return err
	}
	for _, s := range list {
		if err := fn(c, s.Name); err != nil {
			return err
		}
	}
	return nil
}

// startOne starts a service; the SCM's error text becomes the cmdlet's
// "Service '<display> (<name>)' cannot be started due to the following error:
// ..." as Start-Service words it.
func startOne(c *Call, name string) error {
	h := ps(c).h
	s, _ := h.svcs.get(name)
	if err := h.startService(name); err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "Service '") {
			msg = fmt.Sprintf("Service '%s (%s)' cannot be started due to the following error: %s", s.DisplayName, s.Name, msg)
		}
		return c.Error(c.Fail(msg, "OpenError", "System.ServiceProcess.ServiceController", "ServiceCommandException",
			"CouldNotStartService", "Microsoft.PowerShell.Commands.ServiceCommandException"))
	}
	return nil
}

// stopOne stops a service; with -Force the running services that depend on
// it are stopped first (without it the SCM refuses: ServiceError 1051, worded
// as Stop-Service words it).
func stopOne(c *Call, name string) error {
	stop := ps(c).h.stopService
	if c.Switch("Force") {
		stop = ps(c).h.stopServiceWithDependents
	}
	if err := stop(name); err != nil {
		s, _ := ps(c).h.svcs.get(name)
		return c.Error(c.Fail(fmt.Sprintf("Service '%s (%s)' cannot be stopped due to the following error: %v", s.DisplayName, s.Name, err), "CloseError",
			"System.ServiceProcess.ServiceController", "ServiceCommandException", "CouldNotStopService", "Microsoft.PowerShell.Commands.ServiceCommandException"))
	}
	return nil
}

// registryKey returns the values of a key of the host's registry (HKLM:\...
// or Registry::HKEY_LOCAL_MACHINE\...) as Get-ItemProperty shows them:
// REG_DWORD as Int32, REG_MULTI_SZ as String[], the rest as String. What the
// registry holds is what the host's programs wrote (the SCM's service keys,
// nssm's Parameters, the machine environment, CurrentVersion).
func (h *Host) registryKey(p string) (map[string]any, bool) {
	k := strings.TrimRight(strings.TrimPrefix(strings.TrimPrefix(p, "Registry::"), "registry::"), `\`)
	if i := strings.IndexByte(k, '\\'); i > 0 {
		switch strings.ToLower(k[:i]) {
		case "hklm:", "hkey_local_machine":
			k = "HKLM" + k[i:]
		default:
			return nil, false
		}
	} else {
		return nil, false
	}
	vals, ok := h.reg.values(k)
	if !ok {
		return nil, false
	}
	out := map[string]any{}
	for n, v := range vals {
		switch v.Type {
		case RegDWord:
			out[n] = int(int32(v.DWord))
		case RegMultiSZ:
			out[n] = append([]string(nil), v.Multi...)
		default:
			out[n] = v.String()
		}
	}
	return out, true
}

func registryCmdlets() []*Cmdlet {
	get := func(c *Call, name string) (map[string]any, string, error) {
		p, reg, err := itemPath(c)
		if err != nil || p == "" {
			return nil, "", err
		}
		if !reg {
			return nil, "", c.Unmodelled(name + " on the file system")
		}
		vals, ok := ps(c).h.registryKey(p)
		if !ok {
			return nil, "", pathNotFound(c, p)
		}
		return vals, p, nil
	}
	return []*Cmdlet{
		{Name: "Get-ItemProperty", Class: "Microsoft.PowerShell.Commands.GetItemPropertyCommand", Aliases: []string{"gp"},
			Source: mgmt + "get-itemproperty?view=powershell-5.1", Behaviour: "the values of a modelled registry key (" + CurrentVersionKey + `, HKLM:\SYSTEM\CurrentControlSet\Services\<name>, HKLM:\SYSTEM\CurrentControlSet\Control's SystemStartOptions); a missing key is PathNotFound`,
			Params: append(pathParams(0), P("Name", "System.String[]", 1, Alias("PSProperty"))), DefaultSet: "Path",
			Run: func(c *Call) error {
				vals, p, err := get(c, "Get-ItemProperty")
				if vals == nil {
					return err
				}
				o := NewObject("System.Management.Automation.PSCustomObject")
				keys := make([]string, 0, len(vals))
				for k := range vals {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					if c.Has("Name") && !containsFold(c.Strs("Name"), k) {
						continue
					}
					o.Set(k, vals[k])
				}
				o.Set("PSPath", "Microsoft.PowerShell.Core\\Registry::"+p)
				c.Write(o)
				return nil
			}},
		{Name: "Get-ItemPropertyValue", Class: "Microsoft.PowerShell.Commands.GetItemPropertyValueCommand", Aliases: []string{"gpv"},
			Source: mgmt + "get-itempropertyvalue?view=powershell-5.1", Behaviour: "one value of a modelled registry key; a missing value is an error",
			Params: append(pathParams(0), P("Name", "System.String[]", 1, Mandatory, Alias("PSProperty"))), DefaultSet: "Path",
			Run: func(c *Call) error {
				vals, p, err := get(c, "Get-ItemPropertyValue")
				if vals == nil {
					return err
				}
				for _, n := range c.Strs("Name") {
					found := false
					for k, v := range vals {
						if strings.EqualFold(k, n) {
							c.Write(v)
							found = true
						}
					}
					if !found {
						if err := c.Error(c.Fail(fmt.Sprintf("Property %s does not exist at path %s.", n, strings.Replace(p, "HKLM:", "HKEY_LOCAL_MACHINE", 1)), "InvalidArgument", n,
							"PSArgumentException", "System.Management.Automation.PSArgumentException", "System.Management.Automation.PSArgumentException")); err != nil {
							return err
						}
					}
				}
				return nil
			}},
	}
}

func containsFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}
