// Command execplugin is a client-go credential plugin for the provider's
// tests of kubernetes.exec. Driven by its environment (set through
// kubernetes.exec.env):
//
//	EXEC_PLUGIN_TOKEN_FILE  file holding the bearer token to hand out
//	EXEC_PLUGIN_TTL         how long the credential is valid (a Go duration)
//	EXEC_PLUGIN_LOG         file to which each run appends its time (RFC 3339, ns)
//	EXEC_PLUGIN_FAIL        if set: print it on standard error and exit 1
//
// It answers with the apiVersion client-go asks for in KUBERNETES_EXEC_INFO,
// and fails if client-go says the run is interactive (the provider never is).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	now := time.Now()
	if log := os.Getenv("EXEC_PLUGIN_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(f, now.Format(time.RFC3339Nano))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if msg := os.Getenv("EXEC_PLUGIN_FAIL"); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	var info struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Interactive bool `json:"interactive"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("KUBERNETES_EXEC_INFO")), &info); err != nil {
		return fmt.Errorf("reading KUBERNETES_EXEC_INFO: %v", err)
	}
	if info.Spec.Interactive {
		return fmt.Errorf("asked for an interactive run")
	}
	token, err := os.ReadFile(os.Getenv("EXEC_PLUGIN_TOKEN_FILE"))
	if err != nil {
		return err
	}
	ttl, err := time.ParseDuration(os.Getenv("EXEC_PLUGIN_TTL"))
	if err != nil {
		return fmt.Errorf("EXEC_PLUGIN_TTL: %v", err)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"apiVersion": info.APIVersion,
		"kind":       "ExecCredential",
		"status": map[string]any{
			"token":               strings.TrimSpace(string(token)),
			"expirationTimestamp": now.Add(ttl).UTC().Format(time.RFC3339),
		},
	})
}
