package pwsh

import "strings"

// errorStream reads a cmdlet's redirections before it runs and says where
// its non-terminating errors go: "null" for 2>$null and *>$null, "output"
// for 2>&1 (the records join the success output, as about_Redirection says
// of 2>&1), "" for the console. A redirection the engine does not model is
// refused here, before the cmdlet has done anything.
//
// Only non-terminating errors are redirected: a statement-terminating error
// (parameter binding, -ErrorAction Stop) is not written to the error stream
// of the command, so 2>$null does not hide it (about_Redirection,
// about_Error_Handling / about_Preference_Variables $ErrorActionPreference).
func (r *Runtime) errorStream(redirs []*Node) (string, error) {
	mode := ""
	for _, rd := range redirs {
		op, toNull, ok := redirection(rd)
		if !ok {
			return "", r.terminate(rd, errUnsupported("the redirection "+rd.Text), true)
		}
		switch {
		case op == "2>&1":
			mode = "output"
		case (op == "2>" || op == "*>") && toNull:
			mode = "null"
		}
	}
	return mode, nil
}

// redirection reads one redirection: its operator, whether its target is
// $null, and whether the engine models it (redirect applies the same set).
func redirection(rd *Node) (op string, toNull, ok bool) {
	op = strings.TrimSpace(rd.Kids[0].Text)
	target := rd.child("redirected_file_name")
	toNull = target != nil && strings.EqualFold(strings.TrimSpace(target.Text), "$null")
	switch {
	case op == "2>&1":
		ok = true
	case (op == ">" || op == "1>" || op == "2>" || op == "*>") && toNull:
		ok = true
	case (op == ">" || op == ">>") && target != nil && !toNull:
		ok = true
	}
	return op, toNull, ok
}
