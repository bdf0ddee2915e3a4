// Package networking is the provider's knowledge of how Windows nodes get
// their pod network, one file per networking mode (windows_node_networking's
// cni): flannel.go, none.go.
//
// It exists so that a mode lives in one place. A mode decides which agents
// run on every Windows node and the cluster objects that run them, the CNI
// configuration the join writes, the programs on the Windows host it needs
// and where they are, its VXLAN overlay, whether it needs the cluster CIDR,
// and which network plugin of the cluster it extends. The packages that act
// on a mode ask it through the Mode interface instead of comparing its
// name: kube applies its objects and waits for its agents, bootstrap writes
// its files on the guest, winnode serialises it into the join, and resources
// validate it and record its overlay. Adding a mode is one file here (plus
// its templates) that calls register.
//
// The package is low in the layers: it builds Kubernetes apply
// configurations and renders PowerShell, but calls no API and imports none
// of the provider's orchestration packages.
package networking
