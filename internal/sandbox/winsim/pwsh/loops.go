package pwsh

import "errors"

// whileStmt is while (cond) { }.
func (r *Runtime) whileStmt(n *Node) ([]any, error) {
	var out []any
	for i := 0; ; i++ {
		if r.ctx.Err() != nil {
			return out, &exitSignal{code: 1}
		}
		// The grammar wraps the condition's pipeline in a while_condition.
		cond := n.field("condition")
		if cond != nil && cond.Kind == "while_condition" {
			cond = cond.child("pipeline")
		}
		if cond == nil {
			return out, r.terminate(n, errUnsupported("this form of while"), true)
		}
		ok, err := r.condition(cond)
		if err != nil || !ok {
			return out, err
		}
		o, err := r.block(n.child("statement_block"))
		out = append(out, o...)
		f := (*flowSignal)(nil)
		if isFlow := errors.As(err, &f); isFlow && f.kind == "break" {
			return out, nil
		} else if isFlow && f.kind == "continue" {
			continue
		}
		if err != nil {
			return out, err
		}
	}
}

// forStmt is for (init; cond; step) { }; an empty condition loops until break.
func (r *Runtime) forStmt(n *Node) ([]any, error) {
	run := func(kind string) error {
		if k := n.child(kind); k != nil {
			if p := k.child("pipeline"); p != nil {
				_, err := r.pipelineValue(p)
				return err
			}
		}
		return nil
	}
	if err := run("for_initializer"); err != nil {
		return nil, err
	}
	var out []any
	for {
		if r.ctx.Err() != nil {
			return out, &exitSignal{code: 1}
		}
		if c := n.child("for_condition"); c != nil && c.child("pipeline") != nil {
			ok, err := r.condition(c.child("pipeline"))
			if err != nil || !ok {
				return out, err
			}
		}
		o, err := r.block(n.child("statement_block"))
		out = append(out, o...)
		f := (*flowSignal)(nil)
		if isFlow := errors.As(err, &f); isFlow && f.kind == "break" {
			return out, nil
		} else if err != nil && !(isFlow && f.kind == "continue") {
			return out, err
		}
		if err := run("for_iterator"); err != nil {
			return out, err
		}
	}
}
