package winsim

import (
	"context"
	"fmt"
	"strings"
)

// bcdedit.exe, one form: bcdedit /set [{current}] testsigning on|off (also
// -set, and yes/no), which Antrea's Windows guide asks for when the OVS
// kernel driver is Antrea's test-signed one (antrea-io/antrea
// docs/windows.md: "Bcdedit.exe -set TESTSIGNING ON", then a restart).
// Source: https://learn.microsoft.com/en-us/windows-hardware/drivers/install/the-testsigning-boot-configuration-option
// ("restart the computer for the change to take effect"; 64-bit Windows
// loads no test-signed kernel-mode code without it) and
// https://learn.microsoft.com/en-us/windows-hardware/drivers/devtest/bcdedit--set.
// It needs an administrator (uac.go: "Access is denied."). The setting is
// kept in the BCD store (the registry's HKLM\BCD00000000 hive, the {current}
// loader's element 0x16000049, BcdLibraryBoolean_AllowPrereleaseSignatures)
// and takes effect at the next boot: the boot writes the loader options it
// started with into HKLM\SYSTEM\CurrentControlSet\Control\SystemStartOptions
// (" TESTSIGNING" among them; Windows Internals, 7th ed., part 2, ch. 12,
// "Boot process"), which is what the running system reads.
func init() { registerProgram("bcdedit.exe", SubsystemConsole, runBcdedit) }

const (
	bcdTestSigningKey   = `HKLM\BCD00000000\Objects\{fa926493-6f1c-4193-a414-58f0b2456d1e}\Elements\16000049`
	systemStartOptsKey  = `HKLM\SYSTEM\CurrentControlSet\Control`
	systemStartOptsName = "SystemStartOptions"
)

func runBcdedit(_ context.Context, p *Process) int {
	args := p.Args
	refuse := func(what string) int {
		fmt.Fprintf(p.Stderr, "winsim: bcdedit.exe: the simulated host does not model %s\r\n", what)
		return 1
	}
	if len(args) == 0 || !(strings.EqualFold(args[0], "/set") || strings.EqualFold(args[0], "-set")) {
		return refuse("bcdedit other than /set testsigning on|off")
	}
	args = args[1:]
	if len(args) == 3 {
		if !strings.EqualFold(args[0], "{current}") && !strings.EqualFold(args[0], "{default}") {
			return refuse("the BCD entry " + args[0])
		}
		args = args[1:]
	}
	if len(args) != 2 || !strings.EqualFold(args[0], "testsigning") {
		return refuse("bcdedit /set " + strings.Join(args, " ") + " (testsigning only)")
	}
	var on byte
	switch strings.ToLower(args[1]) {
	case "on", "yes", "true":
		on = 1
	case "off", "no", "false":
	default:
		// bcdedit's message for a boolean it cannot read.
		fmt.Fprintf(p.Stdout, "The element data is not valid.\r\nRun \"bcdedit /?\" for command line assistance.\r\nThe parameter is incorrect.\r\n")
		return 1
	}
	if err := p.Host.reg.set(bcdTestSigningKey, "Element", RegValue{Type: RegBinary, Bin: []byte{on}}); err != nil {
		fmt.Fprintf(p.Stdout, "An error has occurred setting the element data.\r\n%v\r\n", err)
		return 1
	}
	fmt.Fprintf(p.Stdout, "The operation completed successfully.\r\n")
	return 0
}

// bootStartOptions is the boot loader handing the kernel its options: the
// BCD store's TESTSIGNING as this boot has it.
func (h *Host) bootStartOptions() {
	opts := " NOEXECUTE=OPTIN"
	if v, ok := h.reg.get(bcdTestSigningKey, "Element"); ok && len(v.Bin) > 0 && v.Bin[0] == 1 {
		opts += "  TESTSIGNING"
	}
	_ = h.reg.set(systemStartOptsKey, systemStartOptsName, RegValue{Type: RegSZ, Str: opts})
}

// TestSigning reports whether this boot loads test-signed kernel-mode code
// (the host started with TESTSIGNING).
func (h *Host) TestSigning() bool {
	return strings.Contains(h.reg.getString(systemStartOptsKey, systemStartOptsName), "TESTSIGNING")
}
