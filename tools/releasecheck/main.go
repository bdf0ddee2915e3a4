// Command releasecheck verifies what `make release-snapshot` left in dist/
// is what the Terraform Registry needs of a release
// (https://developer.hashicorp.com/terraform/registry/providers/publishing):
// a zip per platform, each holding terraform-provider-windows_v<version>
// (.exe on Windows); <name>_<version>_SHA256SUMS listing every zip and the
// manifest, and matching them (the manifest's sum checked against
// terraform-registry-manifest.json, which the release uploads under that
// name); the manifest declaring protocol 6.
//
// Usage:
//
//	go run ./tools/releasecheck dist
//	go run ./tools/releasecheck -host-config .goreleaser.yml DIR > DIR/goreleaser.yml
//	go run ./tools/releasecheck -host -install CLI DIR/dist
//	go run ./tools/releasecheck -platforms
//
// -host-config writes the GoReleaser config narrowed to this machine's
// platform, its dist directory under DIR: the same archives, sums and
// manifest from one cross-compilation instead of thirteen (what CI can
// afford). -host then expects that one platform's zip, and -install
// installs it from a local mirror as Terraform installs a registry
// provider, and has the CLI start it and read its schema. -platforms lists
// the release's platforms (the list `make release-snapshot` checks the
// release against), for `make release-platforms`.
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

const name = "terraform-provider-windows"

// platforms are those .goreleaser.yml builds: the registry's for providers
// built with Go, less darwin/386 and windows/arm that Go no longer supports.
var platforms = []string{
	"darwin_amd64", "darwin_arm64", "freebsd_386", "freebsd_amd64", "freebsd_arm", "freebsd_arm64",
	"linux_386", "linux_amd64", "linux_arm", "linux_arm64", "windows_386", "windows_amd64", "windows_arm64",
}

// hostPlatform is this machine's, as GoReleaser and the registry name it.
var hostPlatform = runtime.GOOS + "_" + runtime.GOARCH

func main() {
	hostConfig := flag.String("host-config", "", "write this GoReleaser config, narrowed to this machine's platform with its dist under the argument, to stdout")
	host := flag.Bool("host", false, "expect this machine's platform only")
	install := flag.String("install", "", "a Terraform or OpenTofu CLI: install this platform's zip for it and read the provider's schema")
	list := flag.Bool("platforms", false, "print the release's platforms, os_arch, one a line (make release-platforms compiles each)")
	flag.Parse()
	if *list {
		fmt.Println(strings.Join(platforms, "\n"))
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: releasecheck [-host [-install CLI]] DIST | releasecheck -host-config CONFIG DIR")
		os.Exit(2)
	}
	if err := run(*hostConfig, *host, *install, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		os.Exit(1)
	}
}

func run(hostConfig string, host bool, install, arg string) error {
	if hostConfig != "" {
		out, err := narrowToHost(hostConfig, arg)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(out)
		return err
	}
	want := platforms
	if host {
		if !slices.Contains(platforms, hostPlatform) {
			return fmt.Errorf("this machine's platform %s is not one the release builds", hostPlatform)
		}
		want = []string{hostPlatform}
	}
	version, err := check(arg, "terraform-registry-manifest.json", want)
	if err != nil {
		return err
	}
	fmt.Printf("releasecheck: %d platforms, the SHA256SUMS and the manifest of %s verified\n", len(want), version)
	if install == "" {
		return nil
	}
	msg, err := installAndReadSchema(install, arg, version)
	if err != nil {
		return err
	}
	fmt.Println("releasecheck:", msg)
	return nil
}

// check verifies dist against the platforms wanted and returns the
// release's version.
func check(dist, manifestSource string, platforms []string) (string, error) {
	found, _ := filepath.Glob(filepath.Join(dist, name+"_*_SHA256SUMS"))
	if len(found) != 1 {
		return "", fmt.Errorf("want one %s_<version>_SHA256SUMS in %s, found %d", name, dist, len(found))
	}
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(found[0]), name+"_"), "_SHA256SUMS")
	sums, err := readSums(found[0])
	if err != nil {
		return "", err
	}
	manifest := fmt.Sprintf("%s_%s_manifest.json", name, version)
	for file, want := range sums {
		path := filepath.Join(dist, file)
		if file == manifest {
			// The release uploads terraform-registry-manifest.json under
			// this name (.goreleaser.yml, release.extra_files); a snapshot
			// publishes nothing, so the sum is checked against the source.
			path = manifestSource
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != want {
			return "", fmt.Errorf("%s does not match its SHA-256 in %s", file, filepath.Base(found[0]))
		}
	}
	zips := 0
	for file := range sums {
		if strings.HasSuffix(file, ".zip") {
			zips++
		}
	}
	if zips != len(platforms) {
		return "", fmt.Errorf("the sums list %d zips, want %d (one per platform)", zips, len(platforms))
	}
	for _, p := range platforms {
		file := fmt.Sprintf("%s_%s_%s.zip", name, version, p)
		if _, ok := sums[file]; !ok {
			return "", fmt.Errorf("%s is not in the sums", file)
		}
		if err := zipHolds(filepath.Join(dist, file), binaryName(version, p)); err != nil {
			return "", err
		}
	}
	if _, ok := sums[manifest]; !ok {
		return "", fmt.Errorf("%s is not in the sums", manifest)
	}
	// The manifest says protocol 6, as the provider serves.
	b, err := os.ReadFile(manifestSource)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(b, []byte(`"protocol_versions": ["6.0"]`)) {
		return "", fmt.Errorf("%s does not declare protocol 6.0", manifestSource)
	}
	return version, nil
}

func binaryName(version, platform string) string {
	bin := name + "_v" + version
	if strings.HasPrefix(platform, "windows_") {
		bin += ".exe"
	}
	return bin
}

// readSums reads sha256sum's format: "<hex>  <file>" per line.
func readSums(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	sums := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, file, ok := strings.Cut(s.Text(), "  ")
		if !ok || len(sum) != sha256.Size*2 {
			return nil, fmt.Errorf("%s: not a sha256sum line: %q", path, s.Text())
		}
		sums[file] = sum
	}
	return sums, s.Err()
}

func zipHolds(path, file string) error {
	r, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }() // read only
	for _, f := range r.File {
		if f.Name == file {
			return nil
		}
	}
	return fmt.Errorf("%s does not hold %s", filepath.Base(path), file)
}
