package winsim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
	"github.com/wincluster/terraform-provider-windows/internal/timezone"
)

// TestTimeZoneIDsMatchTheProvider holds the simulator's copy of Windows'
// zones equal to the list the provider validates time_zone with.
func TestTimeZoneIDsMatchTheProvider(t *testing.T) {
	if !slices.Equal(winsim.TimeZoneIDs, timezone.IDs()) {
		t.Fatal("winsim.TimeZoneIDs differs from internal/timezone's IDs: both copy CLDR's windowsZones; keep them equal")
	}
}

// TestSetTimeZone: a fresh host has Setup's en-US zone; Set-TimeZone -Id
// records the zone as Windows spells it, and Get-TimeZone reads it back.
func TestSetTimeZone(t *testing.T) {
	f := winsimtest.StartHost(t, nil)
	c := clientAs(t, f, "Administrator", winsimtest.Password)
	run := func(script string) (string, int) {
		out, errOut, code, err := c.RunPSWithContext(t.Context(), script)
		if err != nil {
			t.Fatal(err)
		}
		return out + errOut, code
	}
	if got := f.Host.TimeZone(); got != winsim.InstallTimeZone {
		t.Fatalf("a fresh host's zone is %q, want %q", got, winsim.InstallTimeZone)
	}
	out, code := run("Set-TimeZone -Id 'tokyo standard time'\n(Get-TimeZone).Id")
	if code != 0 || strings.TrimSpace(out) != "Tokyo Standard Time" {
		t.Fatalf("exit %d, output %q; want Tokyo Standard Time", code, out)
	}
	if got := f.Host.TimeZone(); got != "Tokyo Standard Time" {
		t.Fatalf("the registry holds %q", got)
	}
	// An unknown ID is a terminating error: it stops the statement (the
	// script, with ErrorActionPreference Stop, as the provider's steps run)
	// and changes nothing.
	out, code = run("$ErrorActionPreference = 'Stop'\nSet-TimeZone -Id 'Tokyo Time'\nWrite-Output 'went on'")
	if code == 0 || strings.Contains(out, "went on") || !strings.Contains(out, "TimeZoneNotFound,Microsoft.PowerShell.Commands.SetTimeZoneCommand") {
		t.Fatalf("an unknown zone: exit %d, output %q", code, out)
	}
	if got := f.Host.TimeZone(); got != "Tokyo Standard Time" {
		t.Fatalf("the refused Set-TimeZone changed the zone to %q", got)
	}
}
