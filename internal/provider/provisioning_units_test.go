package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestProvisioningUnitsPerHost(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    types.Int64
		env  string
		want int
		err  string
	}{
		{name: "unset is the default", v: types.Int64Null(), want: 0},
		{name: "a host's units", v: types.Int64Value(16), want: 16},
		{name: "more lets vCenter queue", v: types.Int64Value(64), want: 64},
		{name: "0 is no limit", v: types.Int64Value(0), want: -1},
		{name: "fewer than a full clone", v: types.Int64Value(3), err: "fewer units than a full clone takes"},
		{name: "negative", v: types.Int64Value(-1), err: "negative"},
		{name: "from the environment", v: types.Int64Null(), env: "8", want: 8},
		{name: "the attribute wins", v: types.Int64Value(16), env: "8", want: 16},
		{name: "environment not a number", v: types.Int64Null(), env: "many", err: "not a whole number"},
		{name: "environment too few", v: types.Int64Null(), env: "2", err: "fewer units"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(provisioningUnitsEnv, tc.env)
			var diags diag.Diagnostics
			got := provisioningUnits(tc.v, &diags)
			if tc.err != "" {
				if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), tc.err) {
					t.Fatalf("diagnostics %v, want an error saying %q", diags, tc.err)
				}
				return
			}
			if diags.HasError() || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, diags, tc.want)
			}
		})
	}
}
