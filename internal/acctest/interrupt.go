package acctest

import (
	"context"
	"io"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
)

// ApplyInterrupted writes config and applies it, and when interrupt is
// closed sends the CLI an interrupt (SIGINT, what Ctrl-C sends): Terraform
// stops the provider (its requests' contexts are cancelled), waits for it
// and writes the state. It returns what the CLI printed and its error.
func (c *CLI) ApplyInterrupted(config string, interrupt <-chan struct{}) (string, error) {
	c.t.Helper()
	return c.interrupted(config, interrupt, func(ctx context.Context, r tfexec.ReattachInfo) error {
		return c.tf.Apply(ctx, tfexec.Reattach(r))
	})
}

// DestroyInterrupted is ApplyInterrupted for a destroy of what the
// directory applied.
func (c *CLI) DestroyInterrupted(config string, interrupt <-chan struct{}) (string, error) {
	c.t.Helper()
	return c.interrupted(config, interrupt, func(ctx context.Context, r tfexec.ReattachInfo) error {
		return c.tf.Destroy(ctx, tfexec.Reattach(r))
	})
}

// interrupted runs a command whose context ends when interrupt is closed
// (never, when nil): terraform-exec then signals os.Interrupt and waits for
// the CLI to stop gracefully.
func (c *CLI) interrupted(config string, interrupt <-chan struct{}, command func(context.Context, tfexec.ReattachInfo) error) (string, error) {
	c.write(config)
	return c.run(func(r tfexec.ReattachInfo) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-interrupt:
				cancel()
			case <-done:
			}
		}()
		return command(ctx, r)
	})
}

// State reads the working directory's state.
func (c *CLI) State() (*tfjson.State, error) {
	c.t.Helper()
	var st *tfjson.State
	_, err := c.run(func(r tfexec.ReattachInfo) error {
		c.tf.SetStdout(io.Discard) // the state holds the variables' secrets
		var err error
		st, err = c.tf.Show(context.Background(), tfexec.Reattach(r))
		return err
	})
	return st, err
}
