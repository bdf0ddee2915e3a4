package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Exec is a client-go credential plugin (kubernetes.exec), as
// hashicorp/kubernetes and kubeconfig's users[].user.exec have it: a command
// that prints an ExecCredential with a token or a client certificate, such as
// `aws eks get-token` or `kubelogin get-token`.
type Exec struct {
	APIVersion string // one of ExecAPIVersions
	Command    string
	Args       []string
	Env        map[string]string
}

// ExecAPIVersions are the ExecCredential versions client-go accepts.
// client.authentication.k8s.io/v1alpha1 was removed in Kubernetes 1.24.
var ExecAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// execFailureTimeout bounds the second run of a failed plugin that collects
// its message.
const execFailureTimeout = 30 * time.Second

// stderrLimit is how much of a failed plugin's standard error (its end) the
// error carries.
const stderrLimit = 2000

// useExec makes the credential plugin the client's only credentials. An
// explicit exec wins over what the kubeconfig's user has (a token would
// otherwise silently take precedence over the plugin in client-go).
func useExec(rc *rest.Config, e *Exec) {
	rc.BearerToken = ""
	rc.BearerTokenFile = ""
	rc.Username, rc.Password = "", ""
	rc.AuthProvider = nil
	rc.TLSClientConfig.CertData, rc.TLSClientConfig.KeyData = nil, nil
	rc.TLSClientConfig.CertFile, rc.TLSClientConfig.KeyFile = "", ""
	ec := &clientcmdapi.ExecConfig{
		APIVersion: e.APIVersion,
		Command:    e.Command,
		Args:       e.Args,
		// Terraform owns the terminal: a plugin must never prompt.
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	for name, value := range e.Env {
		ec.Env = append(ec.Env, clientcmdapi.ExecEnvVar{Name: name, Value: value})
	}
	// Sorted, so that the same settings make the same client-go cache key
	// (client-go shares one authenticator, and its credentials, per key).
	slices.SortFunc(ec.Env, func(a, b clientcmdapi.ExecEnvVar) int { return strings.Compare(a.Name, b.Name) })
	rc.ExecProvider = ec
}

// isExecFailure tells whether a request failed because client-go could not
// get credentials from the plugin (its round tripper's "getting credentials").
func isExecFailure(err error) bool {
	return err != nil && strings.Contains(err.Error(), "getting credentials:")
}

// execError explains a plugin that gave no credentials. client-go sends the
// plugin's standard error to the provider's, which Terraform shows only in its
// logs, and its error carries just the exit code; so a plugin that exited
// with an error is run once more, here, to collect its message. Its standard
// output (which could hold a credential) is discarded.
func execError(ctx context.Context, ec *clientcmdapi.ExecConfig, err error) error {
	cause := rootCause(err).Error()
	cause = strings.TrimPrefix(cause, "getting credentials: ")
	switch {
	case strings.Contains(cause, "not found"):
		return fmt.Errorf("kubernetes.exec: the credential plugin %s is not installed where Terraform runs (%s): install it there, or set kubernetes.exec.command to its full path; "+
			"a Terraform Cloud workspace's remote runs need it in the run environment (a custom agent image, or a command the configuration downloads)", ec.Command, firstLine(cause))
	case strings.Contains(cause, "failed with exit code"):
		msg := execStderr(ctx, ec)
		if msg == "" {
			msg = "(it wrote nothing on standard error)"
		}
		return fmt.Errorf("kubernetes.exec: the credential plugin %s gave no credentials: %s; its message: %s\n\nCheck kubernetes.exec.command, args and env (and the plugin's own login, such as the AWS or Azure credentials it uses)", ec.Command, cause, msg)
	default:
		return fmt.Errorf("kubernetes.exec: the credential plugin %s gave no usable credentials: %s; it must print an ExecCredential of apiVersion %s (kubernetes.exec.api_version) with a token or a client certificate", ec.Command, cause, ec.APIVersion)
	}
}

// execStderr runs the plugin as client-go does (same arguments, environment
// and KUBERNETES_EXEC_INFO, no standard input) and returns the end of its
// standard error.
func execStderr(ctx context.Context, ec *clientcmdapi.ExecConfig) string {
	ctx, cancel := context.WithTimeout(ctx, execFailureTimeout)
	defer cancel()
	info, err := json.Marshal(map[string]any{
		"apiVersion": ec.APIVersion,
		"kind":       "ExecCredential",
		"spec":       map[string]any{"interactive": false},
	})
	if err != nil {
		return ""
	}
	cmd := exec.CommandContext(ctx, ec.Command, ec.Args...)
	cmd.Env = os.Environ()
	for _, e := range ec.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+string(info))
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil && stderr.Len() == 0 {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return err.Error()
		}
	}
	msg := strings.TrimSpace(stderr.String())
	if len(msg) > stderrLimit {
		msg = "…" + msg[len(msg)-stderrLimit:]
	}
	return msg
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
