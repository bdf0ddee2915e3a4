package kube

// WaitForDNSEndpoints is the network probe's wait for a ready cluster DNS
// endpoint, for the external tests.
var WaitForDNSEndpoints = (*Client).waitForDNSEndpoints
