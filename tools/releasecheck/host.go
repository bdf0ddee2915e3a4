package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"sigs.k8s.io/yaml"
)

// narrowToHost returns the GoReleaser config at path with every build
// narrowed to this machine's GOOS and GOARCH and dist set to dir/dist.
// Archives, checksums and the manifest stay as the release makes them. The
// before hooks (go mod tidy) go: CI runs this while the tests compile from
// the same go.mod, and `make lint` already fails on an untidy one.
// GoReleaser reads the JSON this writes as YAML (JSON is YAML).
func narrowToHost(path, dir string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	builds, ok := cfg["builds"].([]any)
	if !ok || len(builds) == 0 {
		return nil, fmt.Errorf("%s: no builds", path)
	}
	for i, b := range builds {
		build, ok := b.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: builds[%d] is not a mapping", path, i)
		}
		if _, ok := build["targets"]; ok {
			return nil, fmt.Errorf("%s: builds[%d] lists targets, which this narrowing does not handle", path, i)
		}
		build["goos"] = []string{runtime.GOOS}
		build["goarch"] = []string{runtime.GOARCH}
		delete(build, "ignore")
	}
	cfg["dist"] = filepath.Join(dir, "dist")
	delete(cfg, "before")
	return json.MarshalIndent(cfg, "", "  ")
}

// installAndReadSchema lays this platform's zip out as a provider mirror
// (-plugin-dir: <host>/<namespace>/<type>/<version>/<os_arch>/), runs the
// CLI's init against it with that exact version required, and reads the
// provider's schema through the CLI: the released binary starts, speaks
// the protocol and serves the resources.
func installAndReadSchema(cli, dist, version string) (string, error) {
	zipPath := filepath.Join(dist, fmt.Sprintf("%s_%s_%s.zip", name, version, hostPlatform))
	work, err := os.MkdirTemp("", "releasecheck-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(work) }()
	registry := "registry.terraform.io"
	if strings.Contains(filepath.Base(cli), "tofu") {
		registry = "registry.opentofu.org"
	}
	dir := filepath.Join(work, "plugins", registry, "wincluster", "windows", version, hostPlatform)
	if err := unzip(zipPath, dir); err != nil {
		return "", err
	}
	config := fmt.Sprintf("terraform {\n  required_providers {\n    windows = {\n      source  = \"wincluster/windows\"\n      version = \"= %s\"\n    }\n  }\n}\n", version)
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(config), 0o600); err != nil {
		return "", err
	}
	if _, err := runCLI(work, cli, "init", "-input=false", "-backend=false", "-plugin-dir="+filepath.Join(work, "plugins")); err != nil {
		return "", err
	}
	out, err := runCLI(work, cli, "providers", "schema", "-json")
	if err != nil {
		return "", err
	}
	var schema struct {
		ProviderSchemas map[string]struct {
			ResourceSchemas map[string]json.RawMessage `json:"resource_schemas"`
		} `json:"provider_schemas"`
	}
	if err := json.Unmarshal(out, &schema); err != nil {
		return "", fmt.Errorf("the schema the CLI printed: %w", err)
	}
	p, ok := schema.ProviderSchemas[registry+"/wincluster/windows"]
	if !ok || p.ResourceSchemas["windows_node"] == nil {
		return "", fmt.Errorf("the CLI read no windows_node resource from the released %s binary", hostPlatform)
	}
	return fmt.Sprintf("%s installed %s %s from its zip and read %d resource types from it", filepath.Base(cli), version, hostPlatform, len(p.ResourceSchemas)), nil
}

func runCLI(dir, cli string, args ...string) ([]byte, error) {
	cmd := exec.Command(cli, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(cli), strings.Join(args, " "), err, out, stderr.String())
	}
	return out, nil
}

func unzip(path, dir string) error {
	r, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }() // read only
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range r.File {
		if f.FileInfo().IsDir() || strings.Contains(f.Name, "/") || strings.Contains(f.Name, "..") {
			continue // the release's zips are flat: the binary and nothing else
		}
		if err := extract(f, filepath.Join(dir, f.Name)); err != nil {
			return err
		}
	}
	return nil
}

func extract(f *zip.File, dst string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }() // read only
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
