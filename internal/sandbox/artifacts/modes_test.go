package artifacts

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// TestModesMatchProvider holds the artifact server's modes (modes.go) equal
// to the provider's registry: a download for every artifact a mode names
// under the same name, and an archive holding the member the image takes
// out of it.
func TestModesMatchProvider(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for _, m := range networking.Modes() {
		var want []string
		for _, a := range m.Artifacts() {
			want = append(want, a.Name)
			got, ok := s.Network[m.Name()][a.Name]
			if !ok {
				continue
			}
			if a.Member == "" {
				continue
			}
			u, err := url.Parse(got.URL)
			if err != nil {
				t.Fatal(err)
			}
			if !tarGzHolds(t, s.files[u.Path], a.Member) {
				t.Errorf("%s.%s: the archive at %s lacks %s", m.Name(), a.Name, u.Path, a.Member)
			}
		}
		var have []string
		for n := range s.Network[m.Name()] {
			have = append(have, n)
		}
		sort.Strings(want)
		sort.Strings(have)
		if !slices.Equal(want, have) {
			t.Errorf("mode %s: the provider's artifacts are %v, the server's %v (register them in artifacts_<mode>.go)", m.Name(), want, have)
		}
	}
	for mode := range s.Network {
		if _, ok := networking.Lookup(mode); !ok {
			t.Errorf("the server serves artifacts of mode %s, which the provider does not register", mode)
		}
	}
}

func tarGzHolds(t *testing.T, archive []byte, member string) bool {
	t.Helper()
	// A member is named with the host's backslashes; archives use slashes.
	member = strings.ReplaceAll(member, `\`, "/")
	if bytes.HasPrefix(archive, []byte("PK")) { // a .zip
		zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
		if err != nil {
			t.Fatalf("not a zip archive: %v", err)
		}
		for _, f := range zr.File {
			if f.Name == member {
				return true
			}
		}
		return false
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("not a gzip archive: %v", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == member || h.Name == "./"+member {
			return true
		}
	}
}
