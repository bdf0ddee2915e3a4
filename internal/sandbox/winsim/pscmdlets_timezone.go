package winsim

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

// The host's time zone.
//
// Sources:
//   - where Windows keeps it: HKLM\SYSTEM\CurrentControlSet\Control\TimeZoneInformation,
//     TimeZoneKeyName the ID of the zone (the DYNAMIC_TIME_ZONE_INFORMATION
//     that SetDynamicTimeZoneInformation writes:
//     https://learn.microsoft.com/windows/win32/api/timezoneapi/ns-timezoneapi-dynamic_time_zone_information);
//   - the zones a host has: the keys under HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion\Time Zones,
//     whose names are Unicode CLDR's Windows zones (windowsZones), the list
//     TimeZoneIDs keeps (a test holds it equal to internal/timezone's);
//   - the zone of a fresh installation: Pacific Standard Time, what Setup
//     gives an en-US installation whose answer file names no TimeZone
//     (https://learn.microsoft.com/windows-hardware/customize/desktop/unattend/microsoft-windows-shell-setup-timezone);
//   - Get-TimeZone and Set-TimeZone (Windows PowerShell 5.1,
//     Microsoft.PowerShell.Management; PowerShell/PowerShell
//     src/Microsoft.PowerShell.Commands.Management/commands/management/TimeZoneCommands.cs):
//     Set-TimeZone -Id finds the zone with TimeZoneInfo.FindSystemTimeZoneById,
//     which matches the key name case-insensitively and throws
//     TimeZoneNotFoundException ("The time zone ID '<id>' was not found on the
//     local computer.") for another, which the cmdlet makes a terminating
//     error (TimeZoneNotFound, InvalidArgument); it records the zone's ID as
//     Windows spells it.

// TimeZoneKey holds the host's time zone; TimeZoneKeyName its ID.
const (
	TimeZoneKey     = `HKLM\SYSTEM\CurrentControlSet\Control\TimeZoneInformation`
	TimeZoneKeyName = "TimeZoneKeyName"
	// InstallTimeZone is the zone of a fresh en-US installation.
	InstallTimeZone = "Pacific Standard Time"
)

// TimeZone is the ID of the host's time zone.
func (h *Host) TimeZone() string { return h.reg.getString(TimeZoneKey, TimeZoneKeyName) }

// seedTimeZone gives a fresh installation its zone, once: a clone keeps the
// zone of the disk it was copied from.
func (h *Host) seedTimeZone() error {
	if _, ok := h.reg.get(TimeZoneKey, TimeZoneKeyName); ok {
		return nil
	}
	return h.reg.set(TimeZoneKey, TimeZoneKeyName, RegValue{Type: RegSZ, Str: InstallTimeZone})
}

// findTimeZone is TimeZoneInfo.FindSystemTimeZoneById: the ID as the host
// spells it.
func findTimeZone(id string) (string, bool) {
	for _, known := range TimeZoneIDs {
		if strings.EqualFold(known, id) {
			return known, true
		}
	}
	return "", false
}

func timeZoneObject(id string) *pwsh.Object {
	o := NewObject("System.TimeZoneInfo")
	o.Str = "Id : " + id
	return o.Set("Id", id)
}

func timeZoneCmdlets() []*Cmdlet {
	return []*Cmdlet{
		{Name: "Get-TimeZone", Class: "Microsoft.PowerShell.Commands.GetTimeZoneCommand", Aliases: []string{"gtz"}, DefaultSet: "Name",
			Source: mgmt + "get-timezone?view=powershell-5.1", Behaviour: "the host's time zone (TimeZoneInfo with its Id), from the registry's TimeZoneKeyName",
			Params: []*Param{P("Name", "System.String[]", 0, In("Name"), Unmodelled), P("Id", "System.String[]", -1, In("Id"), Mandatory, Unmodelled),
				P("ListAvailable", "SwitchParameter", -1, In("ListAvailable"), Mandatory, Unmodelled)},
			Run: func(c *Call) error {
				c.Write(timeZoneObject(ps(c).h.TimeZone()))
				return nil
			}},
		{Name: "Set-TimeZone", Class: "Microsoft.PowerShell.Commands.SetTimeZoneCommand", Aliases: []string{"stz"}, DefaultSet: "Name", ShouldProcess: true,
			Source: mgmt + "set-timezone?view=powershell-5.1", Behaviour: "-Id sets the host's time zone (TimeZoneKeyName, as Windows spells the ID); an ID the host does not have is a terminating TimeZoneNotFound error",
			Params: []*Param{P("Id", "System.String", -1, In("Id"), Mandatory), P("Name", "System.String", 0, In("Name"), Mandatory, Unmodelled),
				P("InputObject", "System.TimeZoneInfo", 0, In("InputObject"), Mandatory, Unmodelled), P("PassThru", "SwitchParameter", -1)},
			Run: func(c *Call) error {
				id := c.Str("Id")
				canon, ok := findTimeZone(id)
				if !ok {
					return c.Throw(c.Fail(fmt.Sprintf("The time zone ID '%s' was not found on the local computer.", id), "InvalidArgument", "Id",
						"TimeZoneNotFoundException", "TimeZoneNotFound", "System.TimeZoneNotFoundException"))
				}
				h := ps(c).h
				if err := h.reg.set(TimeZoneKey, TimeZoneKeyName, RegValue{Type: RegSZ, Str: canon}); err != nil {
					return err
				}
				if c.Switch("PassThru") {
					c.Write(timeZoneObject(canon))
				}
				return nil
			}},
	}
}

// DiskTimeZone is the time zone on the disk of a host that is not running
// (a template's, a powered-off VM's): what TimeZone reads of a running one.
func DiskTimeZone(dir string) (string, error) {
	r, err := loadRegistry(filepath.Join(dir, "registry.json"))
	if err != nil {
		return "", err
	}
	return r.getString(TimeZoneKey, TimeZoneKeyName), nil
}
