package acctest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// CLI drives the real Terraform CLI (TF_ACC_TERRAFORM_PATH: terraform or
// tofu) in a working directory of its own, with the provider served
// in-process as resource.Test serves it. It is for what resource.Test does
// not show: the warnings a plan prints to the user. Whatever it applied is
// destroyed when the test ends.
type CLI struct {
	t   *testing.T
	tf  *tfexec.Terraform
	dir string
}

// NewCLI prepares an empty working directory.
func NewCLI(t *testing.T) *CLI {
	t.Helper()
	PreCheck(t)
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if path == "" {
		t.Fatal("TF_ACC_TERRAFORM_PATH is not set (make testacc sets it)")
	}
	t.Setenv("CHECKPOINT_DISABLE", "1")
	dir := t.TempDir()
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f != "" {
		if _, err := os.Stat(f); err != nil {
			// A missing CLI configuration makes every command warn, among
			// the warnings the test reads: an empty one instead.
			empty := filepath.Join(dir, ".terraformrc")
			if err := os.WriteFile(empty, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("TF_CLI_CONFIG_FILE", empty)
		}
	}
	tf, err := tfexec.NewTerraform(dir, path)
	if err != nil {
		t.Fatal(err)
	}
	c := &CLI{t: t, tf: tf, dir: dir}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); err != nil {
			return // nothing was applied
		}
		if _, err := c.run(func(r tfexec.ReattachInfo) error { return c.tf.Destroy(context.Background(), tfexec.Reattach(r)) }); err != nil {
			t.Errorf("destroying what the test applied: %v", err)
		}
	})
	return c
}

// Apply writes config and applies it, returning what the CLI printed.
func (c *CLI) Apply(config string) (string, error) {
	c.t.Helper()
	c.write(config)
	return c.run(func(r tfexec.ReattachInfo) error { return c.tf.Apply(context.Background(), tfexec.Reattach(r)) })
}

// Plan writes config and plans it (a destroy plan with destroy), returning
// what the CLI printed, warnings included, and the saved plan.
func (c *CLI) Plan(config string, destroy bool) (string, *tfjson.Plan, error) {
	c.t.Helper()
	c.write(config)
	planFile := filepath.Join(c.dir, "tfplan")
	var plan *tfjson.Plan
	out, err := c.run(func(r tfexec.ReattachInfo) error {
		if _, err := c.tf.Plan(context.Background(), tfexec.Reattach(r), tfexec.Out(planFile), tfexec.Destroy(destroy)); err != nil {
			return err
		}
		// Not into the output: the plan JSON holds the variables' values
		// (the administrator password), and a failing test prints it.
		c.tf.SetStdout(io.Discard)
		var err error
		plan, err = c.tf.ShowPlanFile(context.Background(), planFile, tfexec.Reattach(r))
		return err
	})
	return out, plan, err
}

func (c *CLI) write(config string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(config), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// run serves a fresh provider for one command (as resource.Test does), runs
// init once and then the command, and returns its output.
func (c *CLI) run(command func(tfexec.ReattachInfo) error) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reattach, closed, err := serve(ctx)
	if err != nil {
		return "", err
	}
	defer func() {
		cancel()
		<-closed
	}()
	var out bytes.Buffer
	c.tf.SetStdout(&out)
	c.tf.SetStderr(&out)
	defer func() {
		c.tf.SetStdout(nil)
		c.tf.SetStderr(nil)
	}()
	if _, err := os.Stat(filepath.Join(c.dir, ".terraform")); err != nil {
		if err := c.tf.Init(ctx, tfexec.Reattach(reattach)); err != nil {
			return out.String(), fmt.Errorf("terraform init: %w\n%s", err, out.String())
		}
	}
	if err := command(reattach); err != nil {
		return out.String(), fmt.Errorf("%w\n%s", err, out.String())
	}
	return out.String(), nil
}

// serve serves the provider under test in this process, as Terraform's
// reattach mode expects; closed is closed once it has stopped after ctx ends.
func serve(ctx context.Context) (tfexec.ReattachInfo, <-chan struct{}, error) {
	server, err := ProviderFactories["windows"]()
	if err != nil {
		return nil, nil, err
	}
	configs := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go func() {
		_ = tf6server.Serve("registry.terraform.io/hashicorp/windows", func() tfprotov6.ProviderServer { return server },
			tf6server.WithDebug(ctx, configs, closed), tf6server.WithGoPluginLogger(hclog.NewNullLogger()))
	}()
	select {
	case cfg := <-configs:
		rc := tfexec.ReattachConfig{Protocol: string(cfg.Protocol), ProtocolVersion: cfg.ProtocolVersion, Pid: cfg.Pid, Test: cfg.Test,
			Addr: tfexec.ReattachConfigAddr{Network: cfg.Addr.Network(), String: cfg.Addr.String()}}
		// The implied source of the windows_ resources, for either CLI.
		return tfexec.ReattachInfo{"registry.terraform.io/hashicorp/windows": rc, "registry.opentofu.org/hashicorp/windows": rc}, closed, nil
	case <-time.After(30 * time.Second):
		return nil, nil, fmt.Errorf("the provider did not start serving")
	}
}
