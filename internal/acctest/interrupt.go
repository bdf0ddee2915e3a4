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
	c.write(config)
	return c.run(func(r tfexec.ReattachInfo) error {
		// terraform-exec signals os.Interrupt when the context ends.
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
		return c.tf.Apply(ctx, tfexec.Reattach(r))
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
