package winsim

import "github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"

// Short names for declaring cmdlets with the engine's binder.
type (
	Call   = pwsh.Call
	Cmdlet = pwsh.Cmdlet
	Param  = pwsh.Param
)

var (
	P           = pwsh.P
	Alias       = pwsh.Alias
	Enum        = pwsh.Enum
	FlagsEnum   = pwsh.FlagsEnum
	Set         = pwsh.Set
	Mandatory   = pwsh.Mandatory
	Pipeline    = pwsh.Pipeline
	Unmodelled  = pwsh.Unmodelled
	NoEffect    = pwsh.NoEffect
	In          = pwsh.In
	MandatoryIn = pwsh.MandatoryIn
	NewObject   = pwsh.NewObject
	Text        = pwsh.Text
)
