package pwsh

import (
	"strconv"
	"strings"
)

// MachineInfo is what a host may report of its hardware and build. A host
// without it leaves the values that depend on them refused.
type MachineInfo interface {
	ProcessorCount() int // logical processors ([Environment]::ProcessorCount)
	BuildRevision() int  // the update build revision (UBR)
}

// The automatic and preference variables of Windows PowerShell 5.1 as
// powershell.exe has them when WinRS or sshd starts it
// (about_Automatic_Variables, about_Preference_Variables, about_Profiles,
// https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/?view=powershell-5.1).
// A script's own assignment wins. A name of neither list is an unset
// variable: $null.

// preferenceDefaults are the preference variables' values in a new session.
var preferenceDefaults = map[string]any{
	"confirmpreference": "High", "debugpreference": "SilentlyContinue", "errorview": "NormalView",
	"formatenumerationlimit": 4, "informationpreference": "SilentlyContinue", "progresspreference": "Continue",
	"verbosepreference": "SilentlyContinue", "warningpreference": "Continue", "whatifpreference": false,
	"maximumhistorycount": 4096, "maximumaliascount": 4096, "maximumdrivecount": 4096, "maximumerrorcount": 256,
	"maximumfunctioncount": 4096, "maximumvariablecount": 4096, "nestedpromptlevel": 0, "shellid": "Microsoft.PowerShell",
	"pssessionapplicationname": "wsman", "pssessionconfigurationname": "http://schemas.microsoft.com/powershell/Microsoft.PowerShell",
}

// unmodelledVariables are automatic variables every session has that the
// engine does not model: reading one is refused.
var unmodelledVariables = []string{
	"executioncontext", "myinvocation", "pid", "pwd", "psscriptroot", "pscommandpath", "psculture", "psuiculture",
	"consolefilename", "psboundparameters", "args", "psdefaultparametervalues", "pssessionoption", "stacktrace",
	"foreach", "switch", "psdebugcontext", "pscmdlet", "outputencoding", "this", "sender", "eventargs", "event",
	"eventsubscriber", "logcommandhealthevent", "logcommandlifecycleevent", "logenginehealthevent",
	"logenginelifecycleevent", "logproviderhealthevent", "logproviderlifecycleevent", "psmoduleautoloadingpreference",
}

const psHome = `C:\Windows\System32\WindowsPowerShell\v1.0`

// automatic returns an automatic variable's value; ok is false for a name
// that is not one.
func (r *Runtime) automatic(n *Node, lower string) (any, bool, error) {
	if v, ok := preferenceDefaults[lower]; ok {
		return v, true, nil
	}
	switch lower {
	case "pshome":
		return psHome, true, nil
	case "home":
		if v, ok := r.host.Getenv("USERPROFILE"); ok {
			return v, true, nil
		}
	case "profile":
		// about_Profiles: $PROFILE is the CurrentUserCurrentHost path
		// (its note properties are refused: stringProperty).
		if home, ok := r.host.Getenv("USERPROFILE"); ok {
			return home + `\Documents\WindowsPowerShell\Microsoft.PowerShell_profile.ps1`, true, nil
		}
	case "psversiontable":
		t, err := r.versionTable(n)
		return t, true, err
	case "host":
		// powershell.exe's host is ConsoleHost, also under WinRS and sshd
		// (a PSRP session's would be ServerRemoteHost; the simulated host
		// serves no PSRP): ConsoleHost.cs, github.com/PowerShell/PowerShell.
		ver, err := r.psVersion(n)
		if err != nil {
			return nil, true, err
		}
		h := NewObject("System.Management.Automation.Internal.Host.InternalHost")
		h.Str = h.TypeName
		return h.Set("Name", "ConsoleHost").Set("Version", versionObject(ver)), true, nil
	default:
		if contains(unmodelledVariables, lower) {
			return nil, true, r.terminate(n, errUnsupported("the automatic variable $"+lower), true)
		}
		return nil, false, nil
	}
	return nil, true, r.terminate(n, errUnsupported("$"+lower+" on a host without USERPROFILE"), true)
}

// psVersion is Windows PowerShell's version on the host: 5.1.<build>.<rev>,
// the build of Windows and the revision of System.Management.Automation.dll,
// which cumulative updates raise; the simulated host takes its UBR.
func (r *Runtime) psVersion(n *Node) (string, error) {
	mi, ok := r.host.(MachineInfo)
	parts := strings.Split(r.host.OSVersion(), ".")
	if !ok || len(parts) < 3 {
		return "", r.terminate(n, errUnsupported("the PowerShell version of a host that does not report its build"), true)
	}
	return "5.1." + parts[2] + "." + strconv.Itoa(mi.BuildRevision()), nil
}

// versionTable is $PSVersionTable (about_Automatic_Variables, PSVersionTable).
func (r *Runtime) versionTable(n *Node) (*Hashtable, error) {
	ver, err := r.psVersion(n)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(ver, ".")
	h := NewHashtable()
	h.Set("PSVersion", versionObject(ver))
	h.Set("PSEdition", "Desktop")
	var compat []any
	for _, v := range []string{"1.0", "2.0", "3.0", "4.0", "5.0", ver} {
		compat = append(compat, versionObject(v))
	}
	h.Set("PSCompatibleVersions", compat)
	h.Set("BuildVersion", versionObject("10.0."+parts[2]+"."+parts[3]))
	h.Set("CLRVersion", versionObject("4.0.30319.42000"))
	h.Set("WSManStackVersion", versionObject("3.0"))
	h.Set("PSRemotingProtocolVersion", versionObject("2.3"))
	h.Set("SerializationVersion", versionObject("1.1.0.1"))
	return h, nil
}

// profileNotes are $PROFILE's note properties, which the engine's plain
// string does not carry.
var profileNotes = []string{"allusersallhosts", "alluserscurrenthost", "currentuserallhosts", "currentusercurrenthost"}
