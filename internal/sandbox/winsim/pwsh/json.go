package pwsh

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// convertFromJSON is ConvertFrom-Json as Windows PowerShell 5.1 has it
// (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/convertfrom-json?view=powershell-5.1).
// The input strings are collected; one is converted, several are converted
// one by one when the first is JSON on its own, else joined with newlines
// (Get-Content's lines). Objects become PSCustomObjects (properties in
// document order; keys differing only in case are an error), arrays
// object[], integers Int32 or Int64. A top-level array is written as ONE
// object: 5.1 has no -NoEnumerate and does not enumerate (the PowerShell 7
// reference, -NoEnumerate: "Windows PowerShell ... sends arrays as a single
// object"). JavaScriptSerializer reads fractional and huge numbers as
// System.Decimal, which the simulator does not model: refused.
func convertFromJSON() *Cmdlet {
	return &Cmdlet{Name: "ConvertFrom-Json", Class: "Microsoft.PowerShell.Commands.ConvertFromJsonCommand",
		Source:    docBase + "microsoft.powershell.utility/convertfrom-json?view=powershell-5.1",
		Behaviour: "JSON to PSCustomObject/object[]/Int32/Int64/String/Boolean; a top-level array is one object (5.1); fractional numbers (Decimal in 5.1) refused",
		Params:    []*Param{P("InputObject", "System.String", 0, Mandatory, Pipeline)},
		Run: func(c *Call) error {
			var in []string
			for _, v := range pipelineItems(c, "InputObject") {
				in = append(in, toString(v))
			}
			if len(in) == 0 {
				return nil
			}
			if len(in) > 1 {
				if _, err := parseJSON(in[0]); err != nil {
					in = []string{strings.Join(in, "\r\n")}
				}
			}
			for _, s := range in {
				if strings.TrimSpace(s) == "" {
					continue
				}
				v, err := parseJSON(s)
				var un *jsonUnmodelled
				switch {
				case errors.As(err, &un):
					return c.Unmodelled(un.what)
				case err != nil:
					return c.Throw(c.Fail(err.Error(), "NotSpecified", "", "ArgumentException",
						"System.ArgumentException,Microsoft.PowerShell.Commands.ConvertFromJsonCommand", "System.ArgumentException"))
				}
				c.Write(v)
			}
			return nil
		}}
}

type jsonUnmodelled struct{ what string }

func (e *jsonUnmodelled) Error() string { return e.what }

// parseJSON reads one JSON document in order.
func parseJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := jsonValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("Invalid JSON primitive: text after the JSON value.")
	}
	return v, nil
}

func jsonValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, jsonSyntax(err)
	}
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			o := NewObject("System.Management.Automation.PSCustomObject")
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, jsonSyntax(err)
				}
				k := kt.(string)
				val, err := jsonValue(d)
				if err != nil {
					return nil, err
				}
				for _, p := range o.Props() {
					if strings.EqualFold(p, k) {
						return nil, errors.New("Cannot convert the JSON string because a dictionary that was converted from the string contains the duplicated keys '" + p + "' and '" + k + "'.")
					}
				}
				o.Set(k, val)
			}
			if _, err := d.Token(); err != nil {
				return nil, jsonSyntax(err)
			}
			return o, nil
		case '[':
			out := []any{}
			for d.More() {
				val, err := jsonValue(d)
				if err != nil {
					return nil, err
				}
				out = append(out, val)
			}
			if _, err := d.Token(); err != nil {
				return nil, jsonSyntax(err)
			}
			return out, nil
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return int(i), nil
		}
		return nil, &jsonUnmodelled{"the JSON number " + string(v) + " (System.Decimal in Windows PowerShell 5.1)"}
	case string, bool, nil:
		return v, nil
	}
	return nil, errors.New("Invalid JSON primitive.")
}

// jsonSyntax words a syntax error. JavaScriptSerializer's own messages
// ("Invalid JSON primitive: x.", "Invalid object passed in, ...") are not
// reproduced word for word: the record's id and exception are.
func jsonSyntax(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("Invalid object passed in, the JSON text ended early.")
	}
	return errors.New("Invalid JSON primitive: " + err.Error() + ".")
}
