package acctest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
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

// FilesHoldingPassword searches every file of a simulated host's disk (its
// fs/ tree, the registry and the service table beside it: what a clone
// copies) for the password in each of its PasswordEncodings, and returns the
// files that hold one, relative to dir.
func FilesHoldingPassword(dir, password string) ([]string, error) {
	needles := PasswordEncodings(password)
	var found []string
	for _, e := range []string{"fs", "registry.json", "services.json", "features.json"} {
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
