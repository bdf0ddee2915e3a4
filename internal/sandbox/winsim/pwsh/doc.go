// Package pwsh stands in for Windows PowerShell 5.1 (powershell.exe) on the
// simulated Windows hosts: it parses a script with the tree-sitter
// PowerShell grammar, refuses it whole on a syntax error (and where
// PowerShell's own tokenizer would read its quotes differently, quotes.go),
// and runs it by walking the syntax tree. Cmdlets, parameters and .NET
// members it does not model fail as PowerShell fails them (an unknown
// command, parameter or method), never "recorded, succeeds"; the machine
// itself (files, environment, programs, services) is the Host that
// internal/sandbox/winsim implements.
//
// Like all of the simulated world it imports nothing of the provider: it
// judges the provider's scripts from outside, as Windows would.
// internal/sandbox/winsim/doc.go lists what is modelled and where its
// behaviour comes from.
package pwsh
