package kubeletsim

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The container runtime's gMSA path.
//
// A container whose securityContext.windowsOptions.gmsaCredentialSpec (the
// pod's, or its own; the windows-gmsa webhook fills it from
// gmsaCredentialSpecName) holds a credential spec runs as that gMSA: the
// kubelet hands the JSON to containerd (kuberuntime_container_windows.go
// determineEffectiveSecurityContext), which puts it in the OCI spec's
// windows.credentialSpec (OCI runtime-spec config-windows.md), and HCS, at
// the container's creation, has the host retrieve the gMSA's password from
// a domain controller (Microsoft Learn, "Group Managed Service Accounts for
// Windows containers": "the container host retrieves the gMSA password from
// an Active Directory domain controller"). That works only on a host that
// is joined to the gMSA's domain and whose computer account is allowed to
// retrieve the password (the gMSA's PrincipalsAllowedToRetrieveManagedPassword,
// in practice a group of container hosts: Microsoft Learn, "Create gMSAs
// for Windows containers"; "Troubleshoot gMSAs for Windows containers":
// make sure the host can use the gMSA, Test-ADServiceAccount). Otherwise
// HCS fails the compute system's creation ("Failed to setup the external
// credentials for Container '<id>': <cause>", event 11507 of
// Microsoft-Windows-Hyper-V-Compute, microsoft/Windows-Containers#221) and
// containerd's task creation fails with it, which the kubelet reports as
// the container's RunContainerError and a Failed event "Error: failed to
// create containerd task: failed to create shim task:
// hcs::CreateComputeSystem <id>: <cause>: unknown" (containerd's wording,
// microsoft/hcsshim#2017, antrea-io/antrea#2774). The kubelet retries the
// start with its back-off (10 s, doubling: pkg/kubelet/kubelet.go
// backOffPeriod), so a host added to the group later starts it.
//
// The causes, as Win32 errors (Microsoft Learn, "System Error Codes"):
//   - no domain the host reaches (no GMSADomain, or not the credential
//     spec's domain): 1355 ERROR_NO_SUCH_DOMAIN;
//   - the host is not a member of that domain (no enabled computer account
//     of its name): 1355 as well, since the host has no domain identity to
//     ask with;
//   - the host's account is not allowed to retrieve the gMSA's password, or
//     no such gMSA: 5 ERROR_ACCESS_DENIED "Access is denied." (the
//     msDS-ManagedPassword read is refused to principals outside
//     msDS-GroupMSAMembership).
//
// Not modelled, so refused (CreateContainerError) rather than run:
// HostAccountConfig (Container Credential Guard plugins on non-domain-joined
// hosts) and gMSA on HostProcess containers.

// GMSADomain is the Active Directory domain the host's containers retrieve
// gMSA passwords from.
type GMSADomain interface {
	// RetrieveManagedPassword is the host computer's retrieval of the
	// gMSA's managed password in domain (its DNS name): nil when the domain
	// gives it, else a *Win32Error.
	RetrieveManagedPassword(ctx context.Context, computer, domain, gmsa string) error
}

// Win32Error is a Windows error code with its system message.
type Win32Error struct {
	Code    int
	Message string
}

func (e *Win32Error) Error() string { return e.Message }

// The Win32 errors of the gMSA path.
var (
	ErrNoSuchDomain = &Win32Error{1355, "The specified domain either does not exist or could not be contacted."}
	ErrAccessDenied = &Win32Error{5, "Access is denied."}
)

// gmsaBackOff is the kubelet's first back-off of a container start that
// failed (pkg/kubelet/kubelet.go backOffPeriod).
const gmsaBackOff = 10 * time.Second

// gmsaCredentialSpec is what the container runtime reads of a credential
// spec: which gMSA, of which domain, and whether a plugin retrieves it.
type gmsaCredentialSpec struct {
	DomainJoinConfig struct {
		MachineAccountName string
		DnsName            string //nolint:revive // the document's own name
	}
	ActiveDirectoryConfig struct {
		HostAccountConfig *json.RawMessage
	}
}

// gmsaSpecs lists the credential specs of the pod's containers: a
// container's own, else the pod's (the kubelet's effective security
// context). Containers without one are absent.
func gmsaSpecs(pod *corev1.Pod) map[string]string {
	var podSpec *string
	if sc := pod.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		podSpec = sc.WindowsOptions.GMSACredentialSpec
	}
	out := map[string]string{}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		spec := podSpec
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.GMSACredentialSpec != nil {
			spec = sc.WindowsOptions.GMSACredentialSpec
		}
		if spec != nil {
			out[c.Name] = *spec
		}
	}
	return out
}

// gmsaStartErrors runs each container's gMSA retrieval on this host: the
// containers that cannot start, with their waiting state (RunContainerError
// and HCS's message through containerd, or CreateContainerError for what is
// not modelled). Empty when every container may start.
func (w *podWorker) gmsaStartErrors(ctx context.Context, pod *corev1.Pod) map[string]corev1.ContainerStateWaiting {
	out := map[string]corev1.ContainerStateWaiting{}
	for name, raw := range gmsaSpecs(pod) {
		var spec gmsaCredentialSpec
		if err := json.Unmarshal([]byte(raw), &spec); err != nil {
			// containerd refuses a credential spec that is no JSON document
			// before HCS sees it.
			out[name] = corev1.ContainerStateWaiting{Reason: "CreateContainerError",
				Message: fmt.Sprintf("failed to create containerd container: invalid credential spec: %v", err)}
			continue
		}
		if spec.ActiveDirectoryConfig.HostAccountConfig != nil {
			out[name] = corev1.ContainerStateWaiting{Reason: "CreateContainerError",
				Message: "gMSA through HostAccountConfig (Container Credential Guard plugins) is not modelled by the simulator"}
			continue
		}
		var err error = ErrNoSuchDomain
		if d := w.n.k.cfg.GMSA; d != nil {
			err = d.RetrieveManagedPassword(ctx, w.n.k.cfg.Host.ComputerName, spec.DomainJoinConfig.DnsName, spec.DomainJoinConfig.MachineAccountName)
		}
		if err != nil {
			// One id per pod and container, so a retry's event is the
			// same event again (the recorder's aggregation).
			id := sandboxID(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: pod.UID + types.UID("/"+name)}})
			out[name] = corev1.ContainerStateWaiting{Reason: "RunContainerError",
				Message: fmt.Sprintf("failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem %s: %v: unknown", id, err)}
		}
	}
	return out
}

// failStart reports containers that could not start: the pod Pending with
// its address, the failed containers waiting with their error (a Failed
// event each), the others waiting too (the kubelet starts a pod's
// containers in one sync and reports the pod only once all start), and
// queues the next try after the back-off.
func (w *podWorker) failStart(ctx context.Context, key string, pod *corev1.Pod, ip string, failed map[string]corev1.ContainerStateWaiting) error {
	for name, st := range failed {
		w.event(ctx, pod, corev1.EventTypeWarning, "Failed", "Error: "+st.Message)
		w.n.k.log.Error("kuberuntime_manager.go:1256", fmt.Errorf("%s", st.Message), "container start failed", "pod", key, "containerName", name)
	}
	updated := pod.DeepCopy()
	st := &updated.Status
	st.Phase = corev1.PodPending
	st.HostIP, st.HostIPs = w.n.nodeIP(), []corev1.HostIP{{IP: w.n.nodeIP()}}
	st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	st.InitContainerStatuses, st.ContainerStatuses = nil, nil
	for _, c := range pod.Spec.InitContainers {
		if waiting, ok := failed[c.Name]; ok {
			st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Waiting: &waiting}})
		}
	}
	for _, c := range pod.Spec.Containers {
		waiting, ok := failed[c.Name]
		if !ok {
			waiting = corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &waiting}})
	}
	w.queue.AddAfter(key, gmsaBackOff)
	_, err := w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
