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
	// Checkpoint is the KB of the checkpoint cumulative update a target LCU
	// of Windows Server 2025 carries its differentials against, and
	// CheckpointUBR the revision that checkpoint brings; "" and 0 for
	// other packages. A host below that revision needs the checkpoint
	// first ("Checkpoint cumulative updates and Microsoft Update Catalog
	// usage", learn.microsoft.com/windows/deployment/update/catalog-checkpoint-cumulative-updates).
	Checkpoint    string
	CheckpointUBR int
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
	lines := []string{
		magic,
		"KB=" + u.KB, "Kind=" + u.Kind, "Build=" + u.Build, "UBR=" + strconv.Itoa(u.UBR),
		"Requires=" + u.Requires, "Restart=" + restart,
	}
	if u.Checkpoint != "" {
		lines = append(lines, "Checkpoint="+u.Checkpoint, "CheckpointUBR="+strconv.Itoa(u.CheckpointUBR))
	}
	return strings.Join(lines, "\r\n") + "\r\n"
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
		case "Checkpoint":
			u.Checkpoint = v
		case "CheckpointUBR":
			u.CheckpointUBR, _ = strconv.Atoi(v)
		}
	}
	return u, nil
}

// Update kinds beyond the servicing stack and the cumulative update.
const (
	// Other is an update of a component with its own servicing (the .NET
	// Framework's cumulative update, a definition update): it brings no UBR.
	Other = "Other"
)

// The update classifications of Windows Update and WSUS, by name, with the
// GUIDs Windows Update Agent reports as ICategory.CategoryID (type
// "UpdateClassification"). Names: "Description of the standard terminology
// that is used to describe Microsoft software updates" (KB824684,
// https://learn.microsoft.com/en-us/troubleshoot/windows-client/installing-updates-features-roles/standard-terminology-software-updates);
// GUIDs: the classifications WSUS synchronizes (UpdateServices'
// IUpdateClassification.Id), as Windows Update for Business lists them
// (https://learn.microsoft.com/en-us/windows/deployment/update/waas-configure-wufb).
var Classifications = map[string]string{
	"Applications":       "5c9376ab-8ce6-464a-b136-22113dd69801",
	"Connectors":         "434de588-ed14-48f5-8eed-a15e09a991f6",
	"Critical Updates":   "e6cf1350-c01b-414d-a61f-263d14d133b4",
	"Definition Updates": "e0789628-ce08-4437-be74-2495b842f43b",
	"Developer Kits":     "e140075d-8433-45c3-ad87-e72345b36078",
	"Drivers":            "ebfc1fc5-71a4-4f7b-9aca-3b9a503104a0",
	"Feature Packs":      "b54e7d24-7add-428f-8b75-90a396fa584f",
	"Guidance":           "9511d615-35b2-47bb-927f-f73d8e9260bb",
	"Security Updates":   "0fa1201d-4330-4fa8-8ae9-b877473b6441",
	"Service Packs":      "68c5b0a3-d1a6-4553-ae49-01d3a7827828",
	"Tools":              "b4832bd8-e735-4761-8daf-37f882276dab",
	"Update Rollups":     "28bc880e-0592-4cbf-8f95-c79b17911d5f",
	"Updates":            "cd5ffd1e-e932-4e3a-bf74-18bf0b1bbd83",
	"Upgrades":           "3689bdc8-b205-4af4-8d4a-a63924c5e9d5",
}

// The simulated update service (the site's WSUS, or Windows Update) serves
// its catalog and the packages' content over HTTP. The real client-server
// protocol (MS-WUSP, SOAP at <server>/ClientWebService/client.asmx) is not
// modelled: the sandbox's client and service share this JSON instead. What
// is modelled is what a script sees: the service's reachability and the
// catalog's content. Content sits under /Content/, where WSUS serves it.
const (
	CatalogPath = "/ClientWebService/sandbox-catalog.json"
	ContentPath = "/Content/"
)

// CatalogEntry is one update the service offers: its metadata (what
// Windows Update Agent's IUpdate reports) and where its package is.
type CatalogEntry struct {
	UpdateID       string `json:"updateId"` // IUpdateIdentity.UpdateID, a GUID
	Title          string `json:"title"`
	KB             string `json:"kb"`             // KBArticleIDs holds it without "KB"
	Classification string `json:"classification"` // a key of Classifications
	Kind           string `json:"kind"`
	Build          string `json:"build"`
	UBR            int    `json:"ubr"`
	Requires       string `json:"requires,omitempty"`
	Restart        bool   `json:"restart"`
	Size           int64  `json:"size"`    // MaxDownloadSize: the package file's length
	Content        string `json:"content"` // path of the package on the service
}

// Entry is the package's catalog entry, its content served at content.
func (u Package) Entry(title, classification, content string) CatalogEntry {
	sum := sha256.Sum256([]byte("update " + u.KB))
	id := hex.EncodeToString(sum[:16])
	return CatalogEntry{
		UpdateID: id[0:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32],
		Title:    title, KB: u.KB, Classification: classification, Kind: u.Kind, Build: u.Build,
		UBR: u.UBR, Requires: u.Requires, Restart: u.Restart, Size: int64(len(u.Encode())), Content: content,
	}
}

// Package is the entry's package, as its file states it.
func (e CatalogEntry) Package() Package {
	return Package{KB: e.KB, Kind: e.Kind, Build: e.Build, UBR: e.UBR, Requires: e.Requires, Restart: e.Restart}
}

// Superseded reports whether a later cumulative update of the same build
// in the catalog replaces e: Windows Update offers only the newest LCU
// (each one contains the earlier ones).
func (e CatalogEntry) Superseded(catalog []CatalogEntry) bool {
	if e.Kind != LCU {
		return false
	}
	for _, o := range catalog {
		if o.Kind == LCU && o.Build == e.Build && o.UBR > e.UBR {
			return true
		}
	}
	return false
}
