package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// testWindowsHost clones a node the way windows_node does and checks the
// simulated host that boots for it, wired to the simulated kubelet.
func testWindowsHost(ctx context.Context, t *testing.T, s *Sandbox) {
	env := map[string]string{}
	for _, e := range s.Env() {
		env[e.Name] = e.Value
	}
	for _, name := range []string{"SANDBOX_HOSTS_DIR", "SANDBOX_WINRM_PORT", "SANDBOX_WINRM_HTTPS_PORT", "SANDBOX_SSH_PORT"} {
		if env[name] == "" {
			t.Errorf("Env lacks %s", name)
		}
	}
	c, err := vsphere.NewClient(ctx, vsphere.Config{Server: env["VSPHERE_SERVER"], User: env["VSPHERE_USER"],
		Password: env["VSPHERE_PASSWORD"], CAFile: env["VSPHERE_CA_FILE"]})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := c.FindVMByPath(ctx, env["SANDBOX_TEMPLATE_2022"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := c.FindFolderByPath(ctx, env["SANDBOX_FOLDER"], false)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := c.FindResourcePoolByID(ctx, env["SANDBOX_RESOURCE_POOL_ID"])
	if err != nil {
		t.Fatal(err)
	}
	vm, err := c.Clone(ctx, vsphere.CloneSpec{Source: tmpl, Name: "win-sandbox", Folder: folder, ResourcePool: pool,
		Sysprep: &vsphere.Sysprep{ComputerName: "WIN-SANDBOX", AdminPassword: "Sandb0x-Node!", IPv4: &vsphere.StaticIPv4{Address: "127.0.40.1", PrefixLength: 8}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Destroy(context.WithoutCancel(ctx), vm); err != nil {
			t.Error(err)
		}
	}()
	if err := c.PowerOn(ctx, vm); err != nil {
		t.Fatal(err)
	}
	ip, err := c.WaitForIP(ctx, vm, vsphere.IPFilter{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// A stock template's clone: the HTTP listener, NTLM with sealed messages.
	tr, err := remote.Connect(cctx, remote.Config{Host: ip, User: "Administrator", Password: "Sandb0x-Node!", NTLM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Close() }()
	res, err := tr.Run(ctx, `hostname`)
	if err != nil || strings.TrimSpace(res.Stdout) != "WIN-SANDBOX" {
		t.Errorf("hostname: %q, %v", res.Stdout, err)
	}
	host := s.Hosts.ByName("WIN-SANDBOX")
	if host == nil {
		t.Fatal("Hosts.ByName finds no host")
	}
	cfg := host.Config()
	if cfg.Programs["kubelet"] == nil || cfg.OnShutdown == nil {
		t.Error("the host is not wired to the simulated kubelet and to vSphere power-off")
	}
	if !strings.EqualFold(cfg.BIOSUUID, vm.BIOSUUID) || cfg.NumCPU != 2 || cfg.MemoryMB != 4096 {
		t.Errorf("host config: UUID %s (VM %s), %d CPU, %d MB", cfg.BIOSUUID, vm.BIOSUUID, cfg.NumCPU, cfg.MemoryMB)
	}
	if _, err := tr.Run(ctx, `Stop-Computer -Force`); err != nil {
		t.Fatal(err)
	}
	wctx, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	if err := c.WaitForPowerState(wctx, vm, vsphere.PoweredOff); err != nil {
		t.Fatal(err)
	}
}
