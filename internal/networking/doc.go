// Package networking is the provider's knowledge of how Windows nodes get
// their pod network, one file per networking mode (windows_node_networking's
// cni): flannel.go, none.go.
//
// It exists so that a mode lives in one place. A mode decides which agents
// run on every Windows node and the cluster objects that run them, the CNI
// configuration the join writes, the programs on the Windows host it needs
// and the golden image's downloads of them, the directories its agents use,
// whether it needs the cluster CIDR, which network plugin of the cluster it
// extends (recognised by Detect, judged at plan by CheckPlugin), its
// computed attributes and how the network probe words its pod network. The
// packages that act on a mode ask it through the Mode interface instead of
// comparing its name: kube applies its objects, waits for its agents and
// detects its plugin, bootstrap writes its files on the guest and protects
// its directories, winnode serialises it into the join and probes it, and
// resources validate it, build windows_golden_image's network_artifacts and
// windows_node_networking's nested attributes from the registry. Adding a
// mode is one file here (plus its templates) that calls Register, and its
// simulated side (internal/sandbox/kubeletsim and artifacts, held equal to
// the registry by their TestModesMatchProvider).
//
// The package is low in the layers: it builds Kubernetes apply
// configurations and renders PowerShell, but calls no API (Detect reads
// through the ClusterReader kube gives it) and imports none of the
// provider's orchestration packages.
package networking
