// Command terraform-provider-windows is the Terraform provider that turns
// vSphere virtual machines running Windows Server into Kubernetes Windows
// nodes. It serves internal/provider over the plugin protocol (version 6);
// -debug runs it for debuggers such as delve (TF_REATTACH_PROVIDERS).
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/wincluster/terraform-provider-windows/internal/clients"
	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// version is set by goreleaser (-X main.version).
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         provider.Address,
		Debug:           debug,
		ProtocolVersion: 6,
	})
	// Serve returns once Terraform has stopped the plugin: the vCenter
	// sessions end now, not at vCenter's idle timeout.
	if lerr := clients.LogoutAll(context.Background()); lerr != nil {
		log.Print(lerr)
	}
	if err != nil {
		log.Fatal(err)
	}
}
