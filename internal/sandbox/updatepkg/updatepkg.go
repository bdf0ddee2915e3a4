// Package updatepkg is the sandbox's Windows update package format: what the
// artifact server (internal/sandbox/artifacts) publishes as .cab and .msu
// files and what the simulated host's servicing stack (winsim's DISM and
// wusa.exe, servicing.go) installs.
//
// A real package is a signed cabinet whose manifest names its KB, the build
// it applies to, the revision (UBR) it brings and its prerequisites: a
// latest cumulative update (LCU) needs the servicing stack update (SSU) of
// its month first ("Servicing stack updates",
// https://learn.microsoft.com/en-us/windows/deployment/update/servicing-stack-updates).
// Here the file is text, one "Name=value" line per fact after a header line,
// and its last line is its signature: the SHA-256 of everything before it,
// standing for the Authenticode signature Windows verifies before it opens
// a package. A package whose content is not what was signed (Corrupt) is
// refused as a real one whose digest does not match its signature is.
package updatepkg

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
)

// Kinds.
const (
	SSU = "SSU" // servicing stack update
	LCU = "LCU" // latest cumulative update
)

// Package is one update package.
type Package struct {
	KB       string // KB5044281
	Kind     string // SSU or LCU
	Build    string // the build it applies to: "20348"
	UBR      int    // the UBR after the restart (an LCU's; 0 for an SSU)
	Requires string // the KB of the SSU it needs first, or ""
	Restart  bool   // whether it needs a restart
}

const magic = "WINSIM-UPDATE-PACKAGE 1"

// Errors of Parse.
var (
	ErrNotAPackage  = errors.New("not an update package")
	ErrBadSignature = errors.New("the digital signature of the object did not verify")
)

func (u Package) body() string {
	restart := "0"
	if u.Restart {
		restart = "1"
	}
	return strings.Join([]string{
		magic,
		"KB=" + u.KB, "Kind=" + u.Kind, "Build=" + u.Build, "UBR=" + strconv.Itoa(u.UBR),
		"Requires=" + u.Requires, "Restart=" + restart,
	}, "\r\n") + "\r\n"
}

// Encode is the signed package file, as the vendor publishes it.
func (u Package) Encode() []byte {
	b := u.body()
	sum := sha256.Sum256([]byte(b))
	return []byte(b + "Signature=" + hex.EncodeToString(sum[:]) + "\r\n")
}

// Corrupt is the package with its content changed after it was signed (a
// tampered or damaged mirror copy): its signature does not verify.
func (u Package) Corrupt() []byte {
	return bytes.Replace(u.Encode(), []byte("UBR="), []byte("UBR=9"), 1)
}

// Parse reads a package file: ErrNotAPackage for any other file,
// ErrBadSignature for one whose signature does not verify.
func Parse(b []byte) (*Package, error) {
	text := string(b)
	i := strings.LastIndex(text, "Signature=")
	if !strings.HasPrefix(text, magic) || i < 0 {
		return nil, ErrNotAPackage
	}
	body, sig := text[:i], strings.TrimSpace(text[i+len("Signature="):])
	sum := sha256.Sum256([]byte(body))
	if hex.EncodeToString(sum[:]) != sig {
		return nil, ErrBadSignature
	}
	u := &Package{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		switch k {
		case "KB":
			u.KB = v
		case "Kind":
			u.Kind = v
		case "Build":
			u.Build = v
		case "UBR":
			u.UBR, _ = strconv.Atoi(v)
		case "Requires":
			u.Requires = v
		case "Restart":
			u.Restart = v == "1"
		}
	}
	return u, nil
}
