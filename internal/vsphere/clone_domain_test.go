package vsphere

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
)

func TestCustomizationJoinsADomainInsteadOfAWorkgroup(t *testing.T) {
	p := Sysprep{ComputerName: "WIN-0", AdminPassword: "x", Domain: &DomainJoin{Domain: "corp.example.test", OU: "OU=K8s,DC=corp,DC=example,DC=test", User: `CORP\svc-join`, Password: "j0in!"}}
	id := p.customizationSpec(1).Identity.(*types.CustomizationSysprep).Identification
	if id.JoinWorkgroup != "" || id.JoinDomain != "corp.example.test" || id.DomainAdmin != `CORP\svc-join` || id.DomainOU != p.Domain.OU {
		t.Fatalf("identification = %+v", id)
	}
	if id.DomainAdminPassword == nil || id.DomainAdminPassword.Value != "j0in!" || !id.DomainAdminPassword.PlainText {
		t.Fatalf("password = %+v", id.DomainAdminPassword)
	}
	p.Domain = nil
	if id := p.customizationSpec(1).Identity.(*types.CustomizationSysprep).Identification; id.JoinWorkgroup != "WORKGROUP" || id.JoinDomain != "" {
		t.Fatalf("without a domain: %+v", id)
	}
	bad := CloneSpec{Name: "x", Source: types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-1"}, Folder: types.ManagedObjectReference{Type: "Folder", Value: "f"},
		Sysprep: &Sysprep{ComputerName: "WIN-0", Domain: &DomainJoin{Domain: "corp.example.test", User: "svc"}}}
	if err := bad.validate(); err == nil || !strings.Contains(err.Error(), "domain join needs") {
		t.Fatalf("validate = %v", err)
	}
}
