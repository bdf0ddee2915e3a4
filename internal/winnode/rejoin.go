package winnode

// Rejoin is why an update runs a node's join steps again, if it does.
type Rejoin int

const (
	// NoRejoin: the update applies labels and taints to the Node as it is.
	NoRejoin Rejoin = iota
	// RejoinNodeGone: the Node was deleted while the VM runs; joining again
	// registers a new one.
	RejoinNodeGone
	// RejoinNetworking: the node's networking changed; joining again in
	// place rewrites the kubelet's and the CNI's configuration (the upgrade
	// path of nodes joined by the earlier design, whose flanneld and
	// kube-proxy Windows services it removes).
	RejoinNetworking
)

// PlanRejoin says whether and why an update joins a node again: its Node is
// gone (joined false), or its networking changes. A node adopted by import
// (and not updated since) already runs with its networking: its first update
// records the networking the configuration names, without joining again.
func PlanRejoin(joined, networkingChanged, adopted bool) Rejoin {
	switch {
	case !joined:
		return RejoinNodeGone
	case networkingChanged && !adopted:
		return RejoinNetworking
	}
	return NoRejoin
}
