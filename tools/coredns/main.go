// Command coredns is the sandbox's cluster DNS: CoreDNS built from its Go
// modules with only the plugins the sandbox's Corefile uses, in the order
// CoreDNS's own plugin.cfg gives them (a plugin's place in
// dnsserver.Directives is its place in the chain).
//
// Upstream: this is CoreDNS's documented way of making a custom build
// (coredns/coredns coredns.go and core/dnsserver/zdirectives.go, with the
// plugin list cut down; https://coredns.io/2017/07/25/compile-time-enabling-or-disabling-plugins/).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives is plugin.cfg's order, cut down to the plugins above.
var directives = []string{
	"bind",
	"ready",
	"health",
	"errors",
	"log",
	"cache",
	"kubernetes",
}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
