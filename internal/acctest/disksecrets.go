package acctest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// PasswordEncodings are the forms a password takes in the files Windows
// Setup and its answer files leave: itself, its UTF-16LE bytes, and the
// base64 of its UTF-16LE text alone and with the element name an answer file
// appends when PlainText is false (AdministratorPassword, Password: Microsoft
// Learn, "Hide sensitive data in an answer file").
func PasswordEncodings(password string) [][]byte {
	out := [][]byte{[]byte(password), utf16LE(password)}
	for _, suffix := range []string{"", "AdministratorPassword", "Password"} {
		out = append(out, []byte(base64.StdEncoding.EncodeToString(utf16LE(password+suffix))))
	}
	return out
}

func utf16LE(s string) []byte {
	units := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(units))
	for i, u := range units {
		binary.LittleEndian.PutUint16(b[2*i:], u)
	}
	return b
}

// DiskEntries are what a simulated host keeps of its disk and a clone copies
// (vmtools' diskEntries: the fs/ tree with C:\Windows\TEMP and VMware Tools'
// customization folder C:\Windows\TEMP\vmware-imc in it, the registry, the
// services, the features, the WinRM listeners, the certificate store, the
// firewall, the installed updates). The simulator's own logs beside them
// (scripts.log) are not the guest's disk.
var DiskEntries = []string{
	"fs", "registry.json", "services.json", "features.json", "listeners.json", "certstore.json",
	"firewall.json", "servicing.json",
}

// Places on a guest's disk where Windows and VMware Tools leave files of
// their own: the noPasswordOnDisk controls plant a password in each.
const (
	GuestTempDir          = `C:\Windows\TEMP`
	GuestCustomizationDir = `C:\Windows\TEMP\vmware-imc`
)

// FilesHoldingPassword searches every file of a simulated host's disk
// (DiskEntries) for the password in each of its PasswordEncodings, and
// returns the files that hold one, relative to dir.
func FilesHoldingPassword(dir, password string) ([]string, error) {
	needles := PasswordEncodings(password)
	var found []string
	for _, e := range DiskEntries {
		err := filepath.WalkDir(filepath.Join(dir, e), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, n := range needles {
				if bytes.Contains(b, n) {
					rel, _ := filepath.Rel(dir, p)
					found = append(found, rel)
					break
				}
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			return found, err
		}
	}
	return found, nil
}

// GuestFile is where the Windows path win (C:\...) lies on the disk of the
// simulated host in dir: each existing directory found as NTFS finds it (in
// any case), the rest as written.
func GuestFile(dir, win string) string {
	p := filepath.Join(dir, "fs")
	for _, c := range strings.Split(strings.ReplaceAll(win, ":", ""), `\`) {
		next := filepath.Join(p, c)
		if entries, err := os.ReadDir(p); err == nil {
			for _, e := range entries {
				if strings.EqualFold(e.Name(), c) {
					next = filepath.Join(p, e.Name())
					break
				}
			}
		}
		p = next
	}
	return p
}
