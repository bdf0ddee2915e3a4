package winsim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// reg.exe, its add subcommand only: reg add <HKLM\key> /v <name> /t
// REG_SZ|REG_DWORD|REG_MULTI_SZ /d <data> /f writes one value under HKEY_LOCAL_MACHINE,
// creating the key ("The operation completed successfully.", exit code 0).
// A filtered token is refused before it runs (uac.go: "ERROR: Access is
// denied."). Every other subcommand (query, delete, import, export, ...),
// root key, type and option is refused as not modelled; a malformed
// REG_DWORD is reg's "ERROR: Invalid syntax." Source:
// https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/reg-add
func init() { registerProgram("reg.exe", SubsystemConsole, runReg) }

func runReg(ctx context.Context, p *Process) int {
	refuse := func(what string) int {
		fmt.Fprintf(p.Stderr, "winsim: reg.exe: the simulated host does not model %s\r\n", what)
		return 1
	}
	if len(p.Args) == 0 || !strings.EqualFold(p.Args[0], "add") {
		return refuse("reg.exe other than 'reg add'")
	}
	if len(p.Args) < 2 {
		fmt.Fprintf(p.Stderr, "ERROR: Invalid syntax.\r\nType \"REG ADD /?\" for usage.\r\n")
		return 1
	}
	key := p.Args[1]
	switch upper := strings.ToUpper(key); {
	case strings.HasPrefix(upper, `HKLM\`):
	case strings.HasPrefix(upper, `HKEY_LOCAL_MACHINE\`):
		key = "HKLM" + key[len("HKEY_LOCAL_MACHINE"):]
	default:
		return refuse("a root key other than HKLM (" + key + ")")
	}
	var name, typ, data string
	force := false
	for i := 2; i < len(p.Args); i++ {
		opt := strings.ToLower(p.Args[i])
		switch opt {
		case "/f":
			force = true
			continue
		case "/v", "/t", "/d":
		default:
			return refuse("the option " + p.Args[i])
		}
		if i+1 >= len(p.Args) {
			fmt.Fprintf(p.Stderr, "ERROR: Invalid syntax.\r\nType \"REG ADD /?\" for usage.\r\n")
			return 1
		}
		i++
		switch opt {
		case "/v":
			name = p.Args[i]
		case "/t":
			typ = strings.ToUpper(p.Args[i])
		case "/d":
			data = p.Args[i]
		}
	}
	if !force {
		return refuse("reg add without /f (it asks before overwriting)")
	}
	if name == "" {
		return refuse("reg add without /v (the key's default value, or the key alone)")
	}
	var v RegValue
	switch typ {
	case "REG_SZ", "":
		v = RegValue{Type: RegSZ, Str: data}
	case "REG_DWORD":
		n, err := strconv.ParseUint(data, 0, 32)
		if err != nil {
			fmt.Fprintf(p.Stderr, "ERROR: Invalid syntax.\r\nType \"REG ADD /?\" for usage.\r\n")
			return 1
		}
		v = RegValue{Type: RegDWord, DWord: uint32(n)}
	case "REG_MULTI_SZ":
		// /d's strings are separated by \0 (reg add's default separator,
		// /s not modelled); an empty /d is an empty list.
		var multi []string
		if data != "" {
			multi = strings.Split(data, `\0`)
		}
		v = RegValue{Type: RegMultiSZ, Multi: multi}
	default:
		return refuse("the value type " + typ)
	}
	if err := p.Host.reg.set(key, name, v); err != nil {
		fmt.Fprintf(p.Stderr, "ERROR: %v\r\n", err)
		return 1
	}
	fmt.Fprintf(p.Stdout, "The operation completed successfully.\r\n\r\n")
	return 0
}
