package resources

// The create timeouts' defaults, for the external test package's latency
// test (node_latency_test.go), so it scales the defaults themselves rather
// than a copy of them.
const (
	NodeCreateTimeoutForTest        = nodeCreateTimeout
	GoldenImageCreateTimeoutForTest = goldenImageCreateTimeout
)
