package vmtools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/addomain/addomaintest"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/vmtools"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/vsphere"
)

// TestCustomizationJoinsTheDomain: a customization with a domain joins in
// the specialize pass (the account in the OU, NetSetup.LOG's status 0x0,
// the join's password scrubbed from Setup's cached answer file, left in
// vCenter's sysprep.xml); one with a wrong password still succeeds as
// vCenter reports it, the guest in its workgroup and NetSetup.LOG saying
// 0x52e (ERROR_LOGON_FAILURE), as Windows does.
func TestCustomizationJoinsTheDomain(t *testing.T) {
	dc := addomaintest.Start(t, addomain.Options{})
	ou := addomaintest.DelegatedOU(t, dc, "Kubernetes", "svc-join", "J0in-Passw0rd!")
	w := startWith(t, func(o *vmtools.Options) { o.Domains = addomain.Locators{dc.Domain(): dc} })
	ctx := t.Context()

	joined := w.cloneInDomain(t, "win-dom-a", "WIN-DOM-A", "127.0.31.1", "J0in-Passw0rd!", ou)
	refused := w.cloneInDomain(t, "win-dom-b", "WIN-DOM-B", "127.0.31.2", "wrong", ou)
	for _, vm := range []*vsphere.VM{joined, refused} {
		if err := w.c.PowerOn(ctx, vm); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := w.c.WaitForCustomization(wctx, vm)
		cancel()
		if err != nil {
			t.Fatalf("the customization fails only Setup's own failures, not the join's: %v", err)
		}
	}

	acct, ok := dc.Computer("WIN-DOM-A")
	if !ok || acct.DN != "CN=WIN-DOM-A,"+ou {
		t.Fatalf("WIN-DOM-A's account: %+v %v", acct, ok)
	}
	if _, ok := dc.Computer("WIN-DOM-B"); ok {
		t.Fatal("a join with a wrong password left an account")
	}

	tr := w.connect(t, "127.0.31.1", "Cust-Passw0rd!")
	log := run(t, tr, `Get-Content -Raw -Path '`+vmtools.NetSetupLog+`'`)
	if !strings.Contains(log, "NetpDoDomainJoin: status: 0x0") || !strings.Contains(log, "lpPassword: (non-null)") || strings.Contains(log, "J0in-Passw0rd!") {
		t.Errorf("NetSetup.LOG = %q", log)
	}
	if cached := run(t, tr, `Get-Content -Raw -Path '`+winsim.PantherAnswerFile+`'`); strings.Contains(cached, "J0in-Passw0rd!") || !strings.Contains(cached, "*SENSITIVE*DATA*DELETED*") {
		t.Errorf("Setup's cached answer file keeps the join password: %q", cached)
	}
	if got := run(t, tr, `Get-Content -Raw -Path '`+vmtools.SysprepAnswerFile+`'`); !strings.Contains(got, "<JoinDomain>corp.example.test</JoinDomain>") || !strings.Contains(got, "<MachineObjectOU>"+ou+"</MachineObjectOU>") {
		t.Errorf("vCenter's sysprep.xml = %q", got)
	}

	tr = w.connect(t, "127.0.31.2", "Cust-Passw0rd!")
	if log := run(t, tr, `Get-Content -Raw -Path '`+vmtools.NetSetupLog+`'`); !strings.Contains(log, "NetpDoDomainJoin: status: 0x52e") {
		t.Errorf("the refused join's NetSetup.LOG = %q", log)
	}
}

func (w *world) cloneInDomain(t *testing.T, name, computer, ip, joinPassword, ou string) *vsphere.VM {
	t.Helper()
	ctx := t.Context()
	tmpl, err := w.c.FindVMByPath(ctx, w.vc.Templates["2022"])
	if err != nil {
		t.Fatal(err)
	}
	folder, err := w.c.FindFolderByPath(ctx, w.vc.Folder, false)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := w.c.FindResourcePoolByID(ctx, w.vc.ResourcePoolID)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := w.c.Clone(ctx, vsphere.CloneSpec{Source: tmpl, Name: name, Folder: folder, ResourcePool: pool, Sysprep: &vsphere.Sysprep{
		ComputerName: computer, AdminPassword: "Cust-Passw0rd!", IPv4: &vsphere.StaticIPv4{Address: ip, PrefixLength: 8},
		Domain: &vsphere.DomainJoin{Domain: "corp.example.test", OU: ou, User: "svc-join", Password: joinPassword},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return vm
}
