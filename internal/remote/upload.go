package remote

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// uploader is what an upload needs of a transport. Only put differs between
// them (SFTP over SSH, base64 lines on a PowerShell's stdin over WinRM); the
// rest of the flow is upload's, the same for both.
type uploader interface {
	Run(ctx context.Context, script string) (Result, error)
	// put writes r to a new file at path on the host.
	put(ctx context.Context, r io.Reader, path string) error
	// removeLater deletes path in the background.
	removeLater(path string)
}

// upload is Transport.Upload for every transport: unless precheck is off, it
// sends nothing when dest already has the hash; otherwise it writes r to a
// temporary file beside dest, checks what was read against size and hash,
// then has the host check the file's hash and move it onto dest, so dest is
// never half written and a corrupt transfer never lands.
func upload(ctx context.Context, t uploader, r io.Reader, size int64, sha, dest string, precheck bool) (skipped bool, err error) {
	if err := validSHA256(sha); err != nil {
		return false, fmt.Errorf("uploading %s: %w", dest, err)
	}
	if precheck {
		res, err := t.Run(ctx, precheckScript(dest))
		if err != nil {
			return false, fmt.Errorf("uploading %s: checking the existing file: %w", dest, err)
		}
		if strings.EqualFold(strings.TrimSpace(res.Stdout), sha) {
			return true, nil
		}
	}
	tmp := tempName(dest)
	src := newHashingReader(r)
	err = t.put(ctx, src, tmp)
	if err == nil {
		if err = src.check(size, sha); err != nil {
			var hm *HashMismatchError
			if errors.As(err, &hm) {
				hm.Dest = dest
			}
		}
	}
	if err != nil {
		t.removeLater(tmp)
		return false, fmt.Errorf("uploading %s: %w", dest, err)
	}
	if _, err := t.Run(ctx, finalizeScript(tmp, dest, sha)); err != nil {
		return false, verifyError(dest, sha, err)
	}
	return false, nil
}

// verifyError reports finalizeScript's hash mismatch as a *HashMismatchError.
func verifyError(dest, sha string, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) && ee.ExitCode == exitHashMismatch {
		got := strings.TrimSpace(strings.TrimPrefix(LastLines(ee.Stderr, 1), "SHA-256 on the host is"))
		return &HashMismatchError{Dest: dest, Want: strings.ToLower(sha), Got: strings.ToLower(got), Where: "on the host"}
	}
	return fmt.Errorf("uploading %s: verifying and moving into place: %w", dest, err)
}

// precheckScript creates dest's directory and prints dest's SHA-256 when it exists.
func precheckScript(dest string) string {
	return fmt.Sprintf("New-Item -ItemType Directory -Force -Path %s | Out-Null\n"+
		"if (Test-Path -LiteralPath %s -PathType Leaf) { (Get-FileHash -Algorithm SHA256 -LiteralPath %s).Hash }\n",
		quotePS(parentDir(dest)), quotePS(dest), quotePS(dest))
}

// exitHashMismatch is the exit code finalizeScript uses for a bad hash.
const exitHashMismatch = 86

// finalizeScript checks tmp's SHA-256 and moves it onto dest, or deletes it.
func finalizeScript(tmp, dest, sha string) string {
	return fmt.Sprintf("$ErrorActionPreference = 'Stop'\n"+
		"$h = (Get-FileHash -Algorithm SHA256 -LiteralPath %s).Hash\n"+
		"if ($h -ne %s) { Remove-Item -LiteralPath %s -Force; [Console]::Error.WriteLine(\"SHA-256 on the host is $h\"); exit %d }\n"+
		"Move-Item -LiteralPath %s -Destination %s -Force\n",
		quotePS(tmp), quotePS(strings.ToUpper(sha)), quotePS(tmp), exitHashMismatch, quotePS(tmp), quotePS(dest))
}

// removeScript deletes a file, ignoring a missing one.
func removeScript(p string) string {
	return fmt.Sprintf("Remove-Item -LiteralPath %s -Force -ErrorAction SilentlyContinue\nexit 0\n", quotePS(p))
}

// tempName returns a unique temporary name next to dest, so the final move
// stays on one volume.
func tempName(dest string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return dest + ".upload-" + hex.EncodeToString(b[:])
}

// tempScriptPath is where scripts too long for a command line are written.
func tempScriptPath() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return `C:\Windows\Temp\tfwin-` + hex.EncodeToString(b[:]) + ".ps1"
}

// hashingReader hashes and counts what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func newHashingReader(r io.Reader) *hashingReader {
	return &hashingReader{r: r, h: sha256.New()}
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// check compares what was read with the caller's size and hash, so a wrong
// hash is reported as the caller's input, not as corruption on the way.
func (r *hashingReader) check(size int64, sha string) error {
	if size >= 0 && r.n != size {
		return fmt.Errorf("read %d bytes, expected %d", r.n, size)
	}
	if got := hex.EncodeToString(r.h.Sum(nil)); !strings.EqualFold(got, sha) {
		return &HashMismatchError{Want: strings.ToLower(sha), Got: got, Where: "content read"}
	}
	return nil
}

// HashMismatchError is an upload whose content does not have the expected SHA-256.
type HashMismatchError struct {
	Dest  string
	Want  string
	Got   string
	Where string // "content read" (the source) or "on the host" (after transfer)
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("uploading %s: SHA-256 mismatch (%s): expected %s, got %s", e.Dest, e.Where, e.Want, e.Got)
}

func validSHA256(s string) error {
	if len(s) != 64 {
		return fmt.Errorf("sha256hex must be 64 hex characters, got %d", len(s))
	}
	if _, err := hex.DecodeString(s); err != nil {
		return fmt.Errorf("sha256hex is not hex: %w", err)
	}
	return nil
}
