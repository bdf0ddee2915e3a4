package winsim

import (
	"strings"
)

// pathCmdlets are the path cmdlets that only compute a path.
func pathCmdlets() []*Cmdlet {
	return []*Cmdlet{
		{Name: "Join-Path", Class: "Microsoft.PowerShell.Commands.JoinPathCommand",
			Source: mgmt + "join-path?view=powershell-5.1",
			Behaviour: "each -Path joined with -ChildPath by the FileSystem provider: '/' read as '\\', one '\\' between " +
				"the parts (Join-Path 'C:\\C\\abc\\' '/etc/x' is C:\\C\\abc\\etc\\x); the drive must exist",
			Params: []*Param{P("Path", "System.String[]", 0, Mandatory, Pipeline, Alias("PSPath")), P("ChildPath", "System.String", 1, Mandatory),
				P("Resolve", "SwitchParameter", -1, Unmodelled), P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled)},
			Run: func(c *Call) error {
				paths := c.Strs("Path")
				if c.HasInput {
					paths = nil
					for _, in := range c.Input {
						paths = append(paths, Text(in))
					}
				}
				for _, p := range paths {
					if i := strings.IndexByte(p, ':'); i > 0 && !(i == 1 && strings.EqualFold(p[:1], "C")) && !isRegistry(p) {
						drive := p[:i]
						if err := c.Error(c.Fail("Cannot find drive. A drive with the name '"+drive+"' does not exist.",
							"ObjectNotFound", drive, "DriveNotFoundException", "DriveNotFound", "System.Management.Automation.DriveNotFoundException")); err != nil {
							return err
						}
						continue
					}
					c.Write(joinPath(p, c.Str("ChildPath")))
				}
				return nil
			}},
	}
}

// joinPath is NavigationCmdletProvider.MakePath as the FileSystem provider
// runs it: both separators read as '\', and exactly one '\' where the parent
// and the child meet (the rest of each part is kept as written).
func joinPath(parent, child string) string {
	parent = strings.ReplaceAll(parent, "/", `\`)
	child = strings.ReplaceAll(child, "/", `\`)
	switch {
	case child == "":
		return parent
	case parent == "":
		return child
	}
	return strings.TrimRight(parent, `\`) + `\` + strings.TrimLeft(child, `\`)
}
