package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
)

// fakeHost is an uploader over a map of files: the shared upload flow runs
// against it without a transport. Its Run understands the flow's scripts by
// their first words.
type fakeHost struct {
	files   map[string][]byte
	removed []string
	// corrupt flips a byte of every file put, as a broken transfer would.
	corrupt bool
}

func (h *fakeHost) Run(_ context.Context, script string) (Result, error) {
	switch {
	case strings.HasPrefix(script, "New-Item"): // precheckScript
		for name, b := range h.files {
			if strings.Contains(script, quotePS(name)+" -PathType") {
				return Result{Stdout: strings.ToUpper(hexSum(b)) + "\r\n"}, nil
			}
		}
		return Result{}, nil
	case strings.HasPrefix(script, "$ErrorActionPreference"): // finalizeScript
		for name, b := range h.files {
			if strings.Contains(script, "-LiteralPath "+quotePS(name)+").Hash") {
				if !strings.Contains(script, quotePS(strings.ToUpper(hexSum(b)))) {
					delete(h.files, name)
					return Result{ExitCode: exitHashMismatch}, &ExitError{ExitCode: exitHashMismatch, Stderr: "SHA-256 on the host is " + strings.ToUpper(hexSum(b))}
				}
				dest := name[:strings.LastIndex(name, ".upload-")]
				h.files[dest] = b
				delete(h.files, name)
				return Result{}, nil
			}
		}
	}
	return Result{}, errors.New("fakeHost: unexpected script " + script)
}

func (h *fakeHost) put(_ context.Context, r io.Reader, path string) error {
	b, err := io.ReadAll(r)
	if h.corrupt && len(b) > 0 {
		b = bytes.Clone(b)
		b[0] ^= 0xff
	}
	h.files[path] = b
	return err
}

func (h *fakeHost) removeLater(path string) {
	h.removed = append(h.removed, path)
	delete(h.files, path)
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUploadFlow runs the one upload flow both transports share: it lands
// the file, skips a file already there, refuses content whose hash is not
// the caller's, and never moves a file corrupted on the way into place.
func TestUploadFlow(t *testing.T) {
	ctx := context.Background()
	data := []byte("kubelet")
	sum := hexSum(data)
	const dest = `C:\k\kubelet.exe`

	h := &fakeHost{files: map[string][]byte{}}
	if skipped, err := upload(ctx, h, bytes.NewReader(data), int64(len(data)), sum, dest, true); err != nil || skipped {
		t.Fatalf("first upload: skipped %v, err %v", skipped, err)
	}
	if got := h.files[dest]; !bytes.Equal(got, data) || len(h.files) != 1 {
		t.Fatalf("files after upload: %v", h.files)
	}
	if skipped, err := upload(ctx, h, bytes.NewReader(data), int64(len(data)), sum, dest, true); err != nil || !skipped {
		t.Fatalf("second upload: skipped %v, err %v; want skipped", skipped, err)
	}

	var hm *HashMismatchError
	h = &fakeHost{files: map[string][]byte{}}
	_, err := upload(ctx, h, bytes.NewReader(data), int64(len(data)), hexSum([]byte("other")), dest, true)
	if !errors.As(err, &hm) || hm.Where != "content read" || hm.Dest != dest {
		t.Fatalf("wrong hash from the caller: err %v, want a HashMismatchError on the content read", err)
	}
	if len(h.files) != 0 || len(h.removed) != 1 {
		t.Fatalf("wrong hash from the caller left %v (removed %v)", h.files, h.removed)
	}

	h = &fakeHost{files: map[string][]byte{}, corrupt: true}
	_, err = upload(ctx, h, bytes.NewReader(data), int64(len(data)), sum, dest, false)
	if !errors.As(err, &hm) || hm.Where != "on the host" || hm.Want != sum || hm.Got == sum {
		t.Fatalf("corrupted transfer: err %v, want a HashMismatchError on the host", err)
	}
	if _, ok := h.files[dest]; ok {
		t.Fatal("a corrupted file was moved into place")
	}

	if _, err := upload(ctx, h, bytes.NewReader(data), int64(len(data)), "abc", dest, true); err == nil || !strings.Contains(err.Error(), "64 hex characters") {
		t.Fatalf("malformed hash: err %v", err)
	}
}
