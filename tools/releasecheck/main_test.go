package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestNarrowToHost: the narrowed config builds this platform only, into
// DIR/dist, and keeps the archives, checksums and manifest of the release's.
func TestNarrowToHost(t *testing.T) {
	out, err := narrowToHost("../../.goreleaser.yml", "build/x")
	if err != nil {
		t.Fatal(err)
	}
	var narrowed, full map[string]any
	if err := yaml.Unmarshal(out, &narrowed); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../.goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &full); err != nil {
		t.Fatal(err)
	}
	build := narrowed["builds"].([]any)[0].(map[string]any)
	if got := fmt.Sprint(build["goos"], build["goarch"], build["ignore"]); got != fmt.Sprintf("[%s] [%s] <nil>", runtime.GOOS, runtime.GOARCH) {
		t.Errorf("narrowed build targets %s", got)
	}
	if narrowed["dist"] != filepath.Join("build/x", "dist") {
		t.Errorf("dist = %v", narrowed["dist"])
	}
	for _, key := range []string{"archives", "checksum", "release"} {
		if fmt.Sprint(narrowed[key]) != fmt.Sprint(full[key]) {
			t.Errorf("%s changed:\n%v\nwant\n%v", key, narrowed[key], full[key])
		}
	}
}

// TestCheck: a dist with the platform's zip, the manifest and their sums
// verifies; a zip that no longer matches its sum, or a missing platform,
// does not.
func TestCheck(t *testing.T) {
	const version = "1.2.3"
	manifest := filepath.Join(t.TempDir(), "terraform-registry-manifest.json")
	writeFile(t, manifest, `{"version": 1, "metadata": {"protocol_versions": ["6.0"]}}`)
	dist := t.TempDir()
	zipName := fmt.Sprintf("%s_%s_linux_amd64.zip", name, version)
	writeZip(t, filepath.Join(dist, zipName), binaryName(version, "linux_amd64"))
	sums := sumLine(t, filepath.Join(dist, zipName), zipName) + sumLine(t, manifest, fmt.Sprintf("%s_%s_manifest.json", name, version))
	writeFile(t, filepath.Join(dist, fmt.Sprintf("%s_%s_SHA256SUMS", name, version)), sums)

	if got, err := check(dist, manifest, []string{"linux_amd64"}); err != nil || got != version {
		t.Fatalf("check = %q, %v; want %s", got, err, version)
	}
	if _, err := check(dist, manifest, []string{"linux_amd64", "darwin_arm64"}); err == nil {
		t.Error("a dist without darwin_arm64's zip verified for it")
	}
	writeZip(t, filepath.Join(dist, zipName), "other")
	if _, err := check(dist, manifest, []string{"linux_amd64"}); err == nil || !strings.Contains(err.Error(), "does not match its SHA-256") {
		t.Errorf("a changed zip: %v", err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeZip(t *testing.T, path, member string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	if _, err := w.Create(member); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func sumLine(t *testing.T, path, as string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]) + "  " + as + "\n"
}

// TestPlatformsAreTheConfigs: the list `make release-platforms` and
// `make release-typecheck` go through is .goreleaser.yml's goos × goarch
// less its ignores, so a platform added there is checked in CI too.
func TestPlatformsAreTheConfigs(t *testing.T) {
	raw, err := os.ReadFile("../../.goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Builds []struct {
			Goos   []string `json:"goos"`
			Goarch []string `json:"goarch"`
			Ignore []struct {
				Goos   string `json:"goos"`
				Goarch string `json:"goarch"`
			} `json:"ignore"`
		} `json:"builds"`
	}
	if err := yaml.Unmarshal(raw, &config); err != nil {
		t.Fatal(err)
	}
	if len(config.Builds) != 1 {
		t.Fatalf(".goreleaser.yml has %d builds, this test reads one", len(config.Builds))
	}
	build := config.Builds[0]
	ignored := map[string]bool{}
	for _, i := range build.Ignore {
		ignored[i.Goos+"_"+i.Goarch] = true
	}
	var want []string
	for _, goos := range build.Goos {
		for _, goarch := range build.Goarch {
			if p := goos + "_" + goarch; !ignored[p] {
				want = append(want, p)
			}
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(platforms))
	if !slices.Equal(got, want) {
		t.Errorf("releasecheck's platforms %v, .goreleaser.yml builds %v", got, want)
	}
}
