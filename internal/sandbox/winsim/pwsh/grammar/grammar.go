// Package grammar is the tree-sitter PowerShell grammar
// (github.com/airbus-cert/tree-sitter-powershell), built by cgo from C sources
// vendored in this directory; package pwsh parses scripts with it.
//
// Why vendored: the module's own Go binding compiles its src/scanner.c, which
// includes <tree_sitter/parser.h> with angle brackets, so building it needed
// the module's src directory on the C include path (CGO_CFLAGS), and a #cgo
// directive can name only its own package's directory (${SRCDIR}), not the
// module cache. With the sources here, -I${SRCDIR} finds tree_sitter/parser.h
// and a plain go build/vet/test needs nothing but a C compiler.
//
// parser.c, scanner.c and tree_sitter/parser.h are the module's src files,
// byte for byte; cgo compiles each .c file of the package as it is. The
// version, and how to refresh it, are in README.md; LICENSE is the grammar's.
package grammar

// #cgo CFLAGS: -std=c11 -fPIC -I${SRCDIR}
// typedef struct TSLanguage TSLanguage;
// const TSLanguage *tree_sitter_powershell(void);
import "C"

import "unsafe"

// Language returns the grammar's TSLanguage, for
// github.com/tree-sitter/go-tree-sitter's NewLanguage.
func Language() unsafe.Pointer {
	return unsafe.Pointer(C.tree_sitter_powershell())
}
