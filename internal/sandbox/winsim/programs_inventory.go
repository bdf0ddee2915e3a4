package winsim

import "sort"

// BuiltinPrograms lists the program identities every simulated host runs
// (registerProgram): System32 programs by file name ("tar.exe"), others by
// the name their simulated executable's content gives ("containerd"). A
// host's HostConfig.Programs adds more (the simulated kubelet and node
// agents). The walk test uses it to show each program the provider's
// scripts run is modelled.
func BuiltinPrograms() []string {
	programsMu.RLock()
	defer programsMu.RUnlock()
	out := make([]string, 0, len(programs))
	for name := range programs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
