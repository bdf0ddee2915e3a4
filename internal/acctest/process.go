package acctest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// pluginProcessEnv makes a test binary started with it a provider plugin
// process instead of a test run (Main): it serves the provider, prints its
// reattach configuration as one JSON line, and serves until it is killed.
const pluginProcessEnv = "ACCTEST_PROVIDER_PROCESS"

// servePluginProcess is the child's side of ApplyInPluginProcess.
func servePluginProcess() int {
	reattach, closed, err := serve(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(reattach); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	<-closed
	return 0
}

// ApplyInPluginProcess writes config and applies it with the provider served
// by a process of its own (this test binary again, started with
// pluginProcessEnv, with the sandbox's settings in its environment), as
// Terraform runs a plugin: so a test can kill it outright (SIGKILL), which
// it cannot do to the provider Apply serves inside the test process.
// started gets the process as soon as it serves; the process is killed, if
// still running, when the apply ends. It returns what the CLI printed.
func (c *CLI) ApplyInPluginProcess(config string, started func(*os.Process)) (string, error) {
	c.t.Helper()
	c.write(config)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), pluginProcessEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	defer func() {
		_ = cmd.Process.Kill() // already dead after a SIGKILL: harmless
		<-exited
	}()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	go func() {
		_ = cmd.Wait() // killed, at the latest by the defer: its status says only that
		close(exited)
	}()
	if err != nil {
		return "", fmt.Errorf("the provider process did not start serving: %w\n%s", err, stderr.String())
	}
	var reattach tfexec.ReattachInfo
	if err := json.Unmarshal(line, &reattach); err != nil {
		return "", fmt.Errorf("the provider process's reattach configuration %q: %w", line, err)
	}
	started(cmd.Process)
	var out bytes.Buffer
	c.tf.SetStdout(&out)
	c.tf.SetStderr(&out)
	defer func() {
		c.tf.SetStdout(nil)
		c.tf.SetStderr(nil)
	}()
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(c.dir, ".terraform")); err != nil {
		if err := c.tf.Init(ctx, tfexec.Reattach(reattach)); err != nil {
			return out.String(), fmt.Errorf("terraform init: %w\n%s", err, out.String())
		}
	}
	if err := c.tf.Apply(ctx, tfexec.Reattach(reattach)); err != nil {
		return out.String(), fmt.Errorf("%w\n%s", err, out.String())
	}
	return out.String(), nil
}
