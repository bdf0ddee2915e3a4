package kubeletsim

import "github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"

// SplitCommandLine splits a Windows service command line (BinaryPathName)
// into the executable and its arguments with the rules of
// CommandLineToArgvW (winsim.CommandLineToArgv), as the service control
// manager hands them to the process.
func SplitCommandLine(line string) (exe string, args []string) {
	argv := winsim.CommandLineToArgv(line)
	if len(argv) == 0 {
		return "", nil
	}
	return argv[0], argv[1:]
}
