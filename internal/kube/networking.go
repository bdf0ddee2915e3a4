package kube

import (
	"fmt"
	"net"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/networking"
)

// Labels every object the networking resource owns carries; the last one is
// how Delete and import find them.
const (
	LabelPartOf      = "app.kubernetes.io/part-of"
	NetworkingPartOf = "windows-node-networking"
)

// NetworkingSpec is what windows_node_networking installs.
type NetworkingSpec struct {
	Namespace        string
	Mode             string // a networking mode's name (networking.Names)
	HostProcessImage string
	// APIServer is the URL the agents reach the API server at: the
	// discovered endpoint, never the kubernetes Service VIP (that VIP only
	// works once kube-proxy runs on the node, which is what kube-proxy is
	// starting to do).
	APIServer   string
	ClusterCIDR string // the pod network the mode hands out subnets from
	ServiceCIDR string
	// ModeSettings: networking.Spec.ModeSettings.
	ModeSettings map[string]string
}

// Agent is a node agent a mode runs on every Windows node (the mode's
// networking.Agent), as the waits and their errors name it.
type Agent = networking.Agent

// NetworkingObjects is the rendered set of objects of a spec.
type NetworkingObjects struct {
	Spec   NetworkingSpec
	agents []networking.AgentObjects
}

// Agents are the node agents of the spec's mode.
func (o *NetworkingObjects) Agents() []Agent {
	out := make([]Agent, 0, len(o.agents))
	for _, a := range o.agents {
		out = append(out, a.Agent)
	}
	return out
}

// Validate reports the first problem of a spec.
func (s NetworkingSpec) Validate() error {
	mode, err := networking.Get(s.Mode)
	switch {
	case err != nil:
		return err
	case s.Namespace == "":
		return fmt.Errorf("no namespace")
	case len(mode.Agents()) == 0:
		return nil
	case !strings.HasPrefix(s.APIServer, "https://"):
		return fmt.Errorf("API server %q is not an https URL", s.APIServer)
	case s.HostProcessImage == "":
		return fmt.Errorf("no HostProcess image")
	}
	if mode.NeedsClusterCIDR() {
		if _, _, err := net.ParseCIDR(s.ClusterCIDR); err != nil {
			return fmt.Errorf("%s needs the cluster (pod) CIDR: %q is not a CIDR", s.Mode, s.ClusterCIDR)
		}
		if _, _, err := net.ParseCIDR(s.ServiceCIDR); err != nil {
			return fmt.Errorf("%s needs the service CIDR: %q is not a CIDR", s.Mode, s.ServiceCIDR)
		}
	}
	return nil
}

// Render builds the objects of a spec: those its mode renders, labelled as
// this provider's.
func (s NetworkingSpec) Render() (*NetworkingObjects, error) {
	if s.HostProcessImage == "" {
		s.HostProcessImage = networking.DefaultHostProcessImage
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	mode, _ := networking.Lookup(s.Mode)
	agents, err := mode.Objects(networking.Spec{
		Namespace: s.Namespace, HostProcessImage: s.HostProcessImage, APIServer: s.APIServer,
		ClusterCIDR: s.ClusterCIDR, ServiceCIDR: s.ServiceCIDR, ModeSettings: s.ModeSettings,
		Labels: map[string]string{LabelManagedBy: FieldManager, LabelPartOf: NetworkingPartOf},
	})
	if err != nil {
		return nil, err
	}
	return &NetworkingObjects{Spec: s, agents: agents}, nil
}

// CNICheck is the readiness check of the cluster's network plugin alone,
// for windows_node_networking's plan.
func (cl *Cluster) CNICheck() Check { return cl.checkCNI() }
