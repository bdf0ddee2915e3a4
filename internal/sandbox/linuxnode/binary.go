package linuxnode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/controlplane"
)

// BinEnv names a directory holding a prebuilt coredns; when set, nothing is
// built.
const BinEnv = "SANDBOX_COREDNS_BIN"

const buildScript = "tools/coredns/build.sh"

// ResolveCoreDNS returns the CoreDNS executable: in $SANDBOX_COREDNS_BIN when
// set, otherwise the one tools/coredns/build.sh prints the directory of
// (found by walking up from the working directory; it builds it on first use).
func ResolveCoreDNS(ctx context.Context, logf func(string, ...any)) (string, error) {
	dir := os.Getenv(BinEnv)
	if dir == "" {
		script, err := controlplane.FindUp(buildScript)
		if err != nil {
			return "", fmt.Errorf("coredns: %s is unset and %w", BinEnv, err)
		}
		logf("coredns: %s (the first build takes minutes)", script)
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "bash", script)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("coredns: %s failed: %w\n%s", script, err, lastLines(stderr.String(), 20))
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		dir = lines[len(lines)-1]
	}
	bin := filepath.Join(dir, "coredns")
	st, err := os.Stat(bin)
	if err != nil {
		return "", fmt.Errorf("coredns: %w", err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("coredns: %s is not executable", bin)
	}
	return bin, nil
}
