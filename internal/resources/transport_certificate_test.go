package resources_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccTransport_sharedTemplateCertificate: a golden image built over
// WinRM HTTPS from the prepared template, whose one certificate (made for
// the template's name) every clone shares with its private key, fails
// verification with a diagnostic that names the cause and the fixes.
func TestAccTransport_sharedTemplateCertificate(t *testing.T) {
	acctest.RequireSandbox(t, "the sandbox's prepared template and its CA")
	acctest.PreCheck(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckTemplatesDestroyed(t),
		Steps: []resource.TestStep{{
			Config: acctest.GoldenImageConfig(acctest.Name("img"), map[string]string{
				"source_template": fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_2022_PREPARED")),
				"transport":       acctest.WinRMOverHTTPSPrepared(""),
			}),
			ExpectError: acctest.Wrapped(`(?s)certificate is issued for ` + os.Getenv("SANDBOX_TEMPLATE_2022_PREPARED_NAME") +
				`.*not for this guest.*every clone presents the same certificate and holds its private key.*vmtools transport.*` +
				`HTTP listener with NTLM message encryption.*its own certificate at its first boot`),
		}},
	})
}
