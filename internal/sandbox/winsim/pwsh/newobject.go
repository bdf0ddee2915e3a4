package pwsh

import "fmt"

// newObjectCmdlet is New-Object for .NET types: New-Object -TypeName T
// [-ArgumentList a, b] is [T]::new(a, b) (the constructor the arguments
// select), for the types whose constructor the engine models; a type it
// does not know is TypeNotFound, a known one without a modelled
// constructor is refused, as are COM objects, -Property and -Strict.
// https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/new-object?view=powershell-5.1
func newObjectCmdlet() *Cmdlet {
	return &Cmdlet{Name: "New-Object", Class: "Microsoft.PowerShell.Commands.NewObjectCommand", DefaultSet: "Net",
		Source:    docBase + "microsoft.powershell.utility/new-object?view=powershell-5.1",
		Behaviour: "-TypeName with -ArgumentList calls the type's constructor as [T]::new(...) does, for the types whose ::new() the engine models; an unknown type is TypeNotFound",
		Params: []*Param{P("TypeName", "System.String", 0, In("Net"), Mandatory), P("ArgumentList", "System.Object[]", 1, Alias("Args"), In("Net")),
			P("ComObject", "System.String", 0, In("Com"), Mandatory, Unmodelled), P("Strict", "SwitchParameter", -1, In("Com"), Unmodelled),
			P("Property", "System.Collections.IDictionary", -1, Unmodelled)},
		Run: func(c *Call) error {
			name := c.Str("TypeName")
			t, ok := lookupType(name)
			if !ok {
				// NewObjectCommand: "Cannot find type [{0}]: verify that the
				// assembly containing this type is loaded." (NewObjectStrings.resx, TypeNotFound).
				return c.Throw(c.Fail(fmt.Sprintf("Cannot find type [%s]: verify that the assembly containing this type is loaded.", name),
					"InvalidType", "", "PSArgumentException", "TypeNotFound", "System.Management.Automation.PSArgumentException"))
			}
			ctor, ok := t.Static["new"]
			if !ok {
				return c.Unmodelled("New-Object of [" + t.Full + "]")
			}
			v, err := ctor(c.rt, items(c.Value("ArgumentList")))
			if err != nil {
				return c.rt.methodError(c.node, "new", len(items(c.Value("ArgumentList"))), err)
			}
			c.Write(v)
			return nil
		}}
}
