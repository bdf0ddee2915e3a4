package kubeletsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// CheckerName is the helper, built by tools/controlplane/build.sh next to the
// control-plane binaries, that judges a kubelet command line and
// KubeletConfiguration with the kubelet's own code
// (tools/controlplane/kubeletcheck). The simulator has no table of its own:
// without the helper a kubelet does not start.
const CheckerName = "kubeletcheck"

// checkRequest and checkResult are kubeletcheck's protocol (its Request and
// Result).
type checkRequest struct {
	Args  []string           `json:"args"`
	Files map[string]*string `json:"files"`
}

type checkResult struct {
	Error       string                               `json:"error"`
	MissingFile string                               `json:"missingFile"`
	Output      []string                             `json:"output"`
	Changed     map[string]string                    `json:"changed"`
	Flags       *checkFlags                          `json:"flags"`
	Config      *kubeletv1beta1.KubeletConfiguration `json:"config"`
	Help        bool                                 `json:"help"`
	Version     bool                                 `json:"version"`
}

type checkFlags struct {
	KubeletConfigFile    string            `json:"kubeletConfigFile"`
	KubeConfig           string            `json:"kubeconfig"`
	BootstrapKubeconfig  string            `json:"bootstrapKubeconfig"`
	HostnameOverride     string            `json:"hostnameOverride"`
	NodeIP               string            `json:"nodeIP"`
	NodeLabels           map[string]string `json:"nodeLabels"`
	CertDirectory        string            `json:"certDirectory"`
	RootDirectory        string            `json:"rootDirectory"`
	CloudProvider        string            `json:"cloudProvider"`
	WindowsService       bool              `json:"windowsService"`
	WindowsPriorityClass string            `json:"windowsPriorityClass"`
}

// checkerPath checks Config.Checker: the sandbox passes the kubeletcheck
// built next to its control plane (controlplane.ControlPlane.BinDir).
// The simulator does not look for it itself.
func checkerPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("kubeletsim: no %s given (Config.Checker, HookOptions.Checker): the kubelet's own flag and configuration checks are needed", CheckerName)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("kubeletsim: %s is missing (rebuild with tools/controlplane/build.sh): %w", CheckerName, err)
	}
	return p, nil
}

// checkKubelet runs kubeletcheck on a command line, giving it the --config
// file from the host (asking again when kubeletcheck names a file the
// first guess missed).
func checkKubelet(ctx context.Context, helper string, files FileSystem, args []string) (*checkResult, error) {
	req := checkRequest{Args: args, Files: map[string]*string{}}
	if p := configFlagGuess(args); p != "" {
		req.Files[p] = readOrNil(files, p)
	}
	for range 3 {
		res, err := runChecker(ctx, helper, req)
		if err != nil {
			return nil, err
		}
		if res.MissingFile == "" {
			return res, nil
		}
		req.Files[res.MissingFile] = readOrNil(files, res.MissingFile)
	}
	return nil, errors.New("kubeletsim: kubeletcheck kept asking for files")
}

func readOrNil(files FileSystem, p string) *string {
	b, err := files.ReadFile(p)
	if err != nil {
		return nil
	}
	s := string(b)
	return &s
}

// configFlagGuess is the last --config value on the command line; only a
// guess to save a round trip (kubeletcheck parses for real).
func configFlagGuess(args []string) string {
	var v string
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--config="):
			v = strings.TrimPrefix(a, "--config=")
		case a == "--config" && i+1 < len(args):
			v = args[i+1]
		}
	}
	return v
}

func runChecker(ctx context.Context, helper string, req checkRequest) (*checkResult, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, helper)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubeletsim: running %s: %w: %s", helper, err, strings.TrimSpace(stderr.String()))
	}
	var res checkResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("kubeletsim: reading %s's answer: %w", helper, err)
	}
	return &res, nil
}
