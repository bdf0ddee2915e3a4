package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
)

func TestTransportConfig(t *testing.T) {
	ctx := context.Background()
	cfg, diags := transportConfig(ctx, types.ObjectNull(transportAttrTypes), "Administrator", "pw", "")
	if diags.HasError() || cfg.Protocol != remote.ProtocolWinRM || !cfg.HTTPS || !cfg.NTLM || cfg.Insecure || cfg.User != "Administrator" ||
		cfg.Password != "pw" || cfg.PrivateKeyPEM != nil || cfg.HostKeys != nil {
		t.Errorf("no transport: %+v, %v; want WinRM over HTTPS with NTLM", cfg, diags)
	}
	attrs := map[string]attr.Value{}
	for name, typ := range transportAttrTypes {
		attrs[name] = types.StringNull()
		switch typ {
		case types.Int64Type:
			attrs[name] = types.Int64Null()
		case types.BoolType:
			attrs[name] = types.BoolNull()
		}
	}
	attrs["type"] = types.StringValue("ssh")
	ssh := types.ObjectValueMust(transportAttrTypes, attrs)
	cfg, diags = transportConfig(ctx, ssh, "Administrator", "pw", "PEM")
	if diags.HasError() || cfg.Protocol != remote.ProtocolSSH || string(cfg.PrivateKeyPEM) != "PEM" || cfg.HostKeys == nil {
		t.Errorf("ssh without a host key: %+v, %v; want the write-only key and trust on first use", cfg, diags)
	}
	attrs["ssh_host_key"] = types.StringValue("ssh-ed25519 AAAA")
	cfg, _ = transportConfig(ctx, types.ObjectValueMust(transportAttrTypes, attrs), "Administrator", "pw", "")
	if cfg.HostKey != "ssh-ed25519 AAAA" || cfg.HostKeys != nil || cfg.PrivateKeyPEM != nil {
		t.Errorf("ssh with a pinned host key: %+v", cfg)
	}
}
