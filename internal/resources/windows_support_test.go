package resources_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

// TestAccNode_supportWarning2019: on the sandbox's Kubernetes v1.36, a
// windows_node and a windows_node_pool made from a Windows Server 2019 image
// warn in their plans, when they are created and in every plan after, that
// 2019 is outside the releases Kubernetes 1.36 supports for Windows nodes,
// naming the API server's version (read by discovery), the source of the rule
// and Microsoft's lifecycle dates of the release; skip_checks =
// ["windows-support"] acknowledges it.
func TestAccNode_supportWarning2019(t *testing.T) {
	acctest.PreCheck(t)
	cli := acctest.NewCLI(t)
	image, node := acctest.Name("win2019"), fmt.Sprintf("w19-%d", acctest.Seq())
	prefix := fmt.Sprintf("p19-%d", acctest.Seq()%10000)
	img := acctest.GoldenImageConfig(image, map[string]string{"source_template": fmt.Sprintf("%q", os.Getenv("SANDBOX_TEMPLATE_2019"))})
	config := func(nodeBody string) string {
		c := strings.Replace(acctest.NodeConfig(image, []string{node}, nodeBody), acctest.GoldenImageConfig(image, nil), img, 1)
		pool := nodePoolConfig(image, prefix, 1, "windows_golden_image.test.template_path", "", "")
		return c + pool[strings.Index(pool, `resource "windows_node_pool"`):]
	}
	rule := regexp.QuoteMeta("Windows Server 2019 is not among the releases Kubernetes 1.36 supports for Windows nodes (Windows Server 2022 and 2025; https://kubernetes.io/docs/concepts/windows/intro/#windows-os-version-support)")
	server := `The cluster's API server reports v1\.36\.\d+\.`
	lifecycle := regexp.QuoteMeta("Microsoft's lifecycle of Windows Server 2019: mainstream support ended 2024-01-09, extended support (security updates) until 2029-01-09 (https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2019).")
	onNode := `Warning: Windows node ` + node + ` runs Windows Server 2019, outside its support on Kubernetes v1\.36\.\d+`

	// Created: the plans of the new node and pool read the template's build.
	out, err := cli.Apply(config(""))
	if err != nil {
		t.Fatal(err)
	}
	expectOutput(t, out, onNode, `Warning: Windows node `+prefix+` \(pool\) runs Windows Server 2019, outside its support`, rule, server, lifecycle)
	if n := strings.Count(out, "runs Windows Server 2019, outside its support"); n < 2 {
		t.Errorf("%d support warnings of the node and the pool, want each:\n%s", n, out)
	}

	// Every plan after: the node's state and the pool's members.
	out, _ = planOK(t, cli, config(""))
	expectOutput(t, out, onNode, `Warning: Windows node pool `+prefix+` runs Windows Server 2019, outside its support on Kubernetes v1\.36\.\d+`,
		rule, server, lifecycle, `list "windows-support" in skip_checks`)

	// Acknowledged on the node: its warning goes, the pool's stays.
	out, _ = planOK(t, cli, config(`  skip_checks = ["windows-support"]`+"\n"))
	if regexp.MustCompile(onNode).MatchString(out) {
		t.Errorf("skip_checks = [\"windows-support\"] on the node, and its plan still warns:\n%s", out)
	}
	expectOutput(t, out, `Warning: Windows node pool `+prefix+` runs Windows Server 2019`)
}
