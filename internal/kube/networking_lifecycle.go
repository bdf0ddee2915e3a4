package kube

import (
	"context"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// The lifecycle of windows_node_networking, sequenced here so the resource
// only converts its model and reports: install (render, apply, read back),
// read, remove (refused while Windows nodes depend on the agents) and import.

// NetworkingResult is what the cluster holds of a networking spec.
type NetworkingResult struct {
	Objects []string          // every object the spec owns, as "Kind namespace/name"
	Drift   []string          // objects missing or changed outside Terraform
	Agents  map[string]string // each agent's DaemonSet status, "missing" when it has none
}

// InstallNetworking renders spec, applies its objects and reads back what
// the cluster holds of them.
func (c *Client) InstallNetworking(ctx context.Context, spec NetworkingSpec) (NetworkingResult, error) {
	objs, err := spec.Render()
	if err != nil {
		return NetworkingResult{}, err
	}
	if err := c.ApplyNetworking(ctx, objs); err != nil {
		return NetworkingResult{}, err
	}
	return c.readNetworking(ctx, objs)
}

// ReadNetworking reads what the cluster holds of spec's objects.
func (c *Client) ReadNetworking(ctx context.Context, spec NetworkingSpec) (NetworkingResult, error) {
	objs, err := spec.Render()
	if err != nil {
		return NetworkingResult{}, err
	}
	return c.readNetworking(ctx, objs)
}

func (c *Client) readNetworking(ctx context.Context, objs *NetworkingObjects) (NetworkingResult, error) {
	st, err := c.ObserveNetworking(ctx, objs)
	if err != nil {
		return NetworkingResult{}, err
	}
	res := NetworkingResult{Objects: objs.Names(), Drift: st.Drift, Agents: map[string]string{}}
	for _, a := range objs.Agents() {
		res.Agents[a.Name] = "missing"
		if s, ok := st.Agents[a.Name]; ok {
			res.Agents[a.Name] = s
		}
	}
	return res, nil
}

// RemoveNetworking deletes every object of the networking in namespace. A
// mode with agents is refused (*WindowsNodesDependError) while Windows
// nodes exist, unless allowWithNodes: their Services and DNS would stop.
func (c *Client) RemoveNetworking(ctx context.Context, namespace, mode string, allowWithNodes bool) error {
	var agents []Agent
	if m, ok := networking.Lookup(mode); ok {
		agents = m.Agents()
	}
	if len(agents) > 0 && !allowWithNodes {
		nodes, err := c.WindowsNodeNames(ctx)
		if err != nil {
			return err
		}
		if len(nodes) > 0 {
			return &WindowsNodesDependError{Nodes: nodes, Agents: agents}
		}
	}
	return c.DeleteNetworking(ctx, namespace)
}

// ImportedNetworking is what an import finds in a namespace.
type ImportedNetworking struct {
	Mode networking.Mode
	// HostProcessImage is the image the mode's first agent runs, or
	// networking.DefaultHostProcessImage when there is none to read.
	HostProcessImage string
}

// ImportNetworking finds the mode whose agents' DaemonSets namespace holds
// (networking.Default's when none) and the image they run.
func (c *Client) ImportNetworking(ctx context.Context, namespace string) (ImportedNetworking, error) {
	name, err := c.ObservedNetworkingMode(ctx, namespace)
	if err != nil {
		return ImportedNetworking{}, err
	}
	mode, err := networking.Get(name)
	if err != nil {
		return ImportedNetworking{}, err
	}
	imp := ImportedNetworking{Mode: mode, HostProcessImage: networking.DefaultHostProcessImage}
	if agents := mode.Agents(); len(agents) > 0 {
		// Best effort, as the import's other attributes: a DaemonSet that
		// cannot be read keeps the default, and the next plan shows drift.
		if ds, err := c.FindDaemonSet(ctx, namespace, agents[0].DaemonSet); err == nil && len(ds.Spec.Template.Spec.Containers) > 0 {
			imp.HostProcessImage = ds.Spec.Template.Spec.Containers[0].Image
		}
	}
	return imp, nil
}
