package pwsh

import (
	"errors"
	"fmt"
)

// ComObjects is a Host that creates COM objects (New-Object -ComObject):
// the object, or ErrCOMNotModelled for a ProgID it does not model (the
// simulator cannot tell a real class it does not model from one Windows
// has not registered, so both are refused). On a host without it,
// -ComObject is refused as not modelled.
type ComObjects interface {
	NewComObject(progID string) (*Object, error)
}

// ErrCOMNotModelled is ComObjects.NewComObject's refusal.
var ErrCOMNotModelled = errors.New("a COM class the host does not model")

// newObjectCmdlet is New-Object for .NET types: New-Object -TypeName T
// [-ArgumentList a, b] is [T]::new(a, b) (the constructor the arguments
// select), for the types whose constructor the engine models; a type it
// does not know is TypeNotFound, a known one without a modelled
// constructor is refused, as are -Property and -Strict. New-Object
// -ComObject P is the host's COM object (ComObjects); any other ProgID is
// refused as not modelled.
// https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/new-object?view=powershell-5.1
func newObjectCmdlet() *Cmdlet {
	return &Cmdlet{Name: "New-Object", Class: "Microsoft.PowerShell.Commands.NewObjectCommand", DefaultSet: "Net",
		Source:    docBase + "microsoft.powershell.utility/new-object?view=powershell-5.1",
		Behaviour: "-TypeName with -ArgumentList calls the type's constructor as [T]::new(...) does, for the types whose ::new() the engine models; an unknown type is TypeNotFound",
		Params: []*Param{P("TypeName", "System.String", 0, In("Net"), Mandatory), P("ArgumentList", "System.Object[]", 1, Alias("Args"), In("Net")),
			P("ComObject", "System.String", 0, In("Com"), Mandatory), P("Strict", "SwitchParameter", -1, In("Com"), Unmodelled),
			P("Property", "System.Collections.IDictionary", -1, Unmodelled)},
		Run: func(c *Call) error {
			if c.Has("ComObject") {
				return newComObject(c)
			}
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

func newComObject(c *Call) error {
	progID := c.Str("ComObject")
	h, ok := c.Host.(ComObjects)
	if !ok {
		return c.Unmodelled("New-Object -ComObject on this host")
	}
	o, err := h.NewComObject(progID)
	switch {
	case errors.Is(err, ErrCOMNotModelled):
		return c.Unmodelled("the COM class " + progID)
	case err != nil:
		return err
	}
	c.Write(o)
	return nil
}
