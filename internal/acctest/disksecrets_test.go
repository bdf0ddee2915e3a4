package acctest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFilesHoldingPasswordSearchesTempAndVMwareIMC: the search finds a
// password in every encoding in C:\Windows\TEMP, in VMware Tools'
// vmware-imc folder and in the disk's state files, and nothing in a disk
// without it.
func TestFilesHoldingPasswordSearchesTempAndVMwareIMC(t *testing.T) {
	const password = "Plant3d-Passw0rd!"
	dir := t.TempDir()
	// The disk as Windows writes it: C:\Windows\Temp, in its own case.
	if err := os.MkdirAll(filepath.Join(dir, "fs", "C", "Windows", "Temp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "listeners.json"), []byte(`{"listeners":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if found, err := FilesHoldingPassword(dir, password); err != nil || len(found) != 0 {
		t.Fatalf("a clean disk: %v, %v", found, err)
	}
	places := []string{GuestTempDir + `\planted.bin`, GuestCustomizationDir + `\guestcust.log`}
	for i, enc := range PasswordEncodings(password) {
		for _, win := range places {
			f := GuestFile(dir, win)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, append([]byte("<Value>"), append(enc, "</Value>"...)...), 0o644); err != nil {
				t.Fatal(err)
			}
			found, err := FilesHoldingPassword(dir, password)
			_ = os.Remove(f)
			rel, _ := filepath.Rel(dir, f)
			if err != nil || !slices.Contains(found, rel) {
				t.Errorf("encoding %d planted in %s (%s): found %v, %v", i, win, rel, found, err)
			}
		}
	}
	if got := GuestFile(dir, GuestCustomizationDir); got != filepath.Join(dir, "fs", "C", "Windows", "Temp", "vmware-imc") {
		t.Errorf("GuestFile(%s) = %s, want the disk's own Temp", GuestCustomizationDir, got)
	}
	if err := os.WriteFile(filepath.Join(dir, "certstore.json"), []byte(password), 0o644); err != nil {
		t.Fatal(err)
	}
	if found, _ := FilesHoldingPassword(dir, password); !slices.Contains(found, "certstore.json") {
		t.Errorf("the certificate store's file is not searched: %v", found)
	}
}
