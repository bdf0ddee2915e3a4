// Package functions holds the provider-defined functions
// (`provider::windows::<name>(...)`).
package functions

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// NewBuildNumber returns the build_number function.
func NewBuildNumber() function.Function { return buildNumber{} }

type buildNumber struct{}

func (buildNumber) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "build_number"
}

func (buildNumber) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Windows Server build of a release",
		MarkdownDescription: "Returns the build of a Windows Server release in the form Kubernetes uses for the " +
			"`node.kubernetes.io/windows-build` node label: `build_number(\"2022\")` is `\"10.0.20348\"`. " +
			"Accepts `2019` (also `1809`, `ltsc2019`), `2022` (also `21h2`, `ltsc2022`) and `2025` (also `24h2`, `ltsc2025`), in any case.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "version",
				MarkdownDescription: "Windows Server release, for example `2022`.",
			},
		},
		Return: function.StringReturn{},
	}
}

func (buildNumber) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var version string
	resp.Error = req.Arguments.Get(ctx, &version)
	if resp.Error != nil {
		return
	}
	release, err := winversion.ByVersion(version)
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, err.Error())
		return
	}
	resp.Error = resp.Result.Set(ctx, release.Build)
}
