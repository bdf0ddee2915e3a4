package winsim

import (
	"context"
	"os"
	"testing"
)

func TestRegistryPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := HostConfig{ComputerName: "WIN-REG", Dir: dir, UBR: 7, Ports: &Ports{WinRM: PortDisabled, WinRMHTTPS: PortDisabled, SSH: PortDisabled}}
	h, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SetMachineEnv("FOO", "bar"); err != nil {
		t.Fatal(err)
	}
	if err := h.svcs.create(Service{Name: "kept", BinaryPathName: `C:\x.exe`, StartupType: StartupManual}); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/registry.json"); err != nil {
		t.Fatal(err)
	}
	h, err = Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Stop(); err != nil {
			t.Error(err)
		}
	})
	if h.MachineEnv()["FOO"] != "bar" {
		t.Error("machine environment lost")
	}
	if _, ok := h.Service("kept"); !ok {
		t.Error("service lost")
	}
	if v := h.currentVersion()["UBR"]; v != "7" {
		t.Errorf("UBR %q", v)
	}
}
