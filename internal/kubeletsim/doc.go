// Package kubeletsim is the kubelet of the simulated Windows hosts
// (internal/winsim): when a host's "kubelet" service starts, it reads what
// the provider wrote on that host and joins the sandbox's real control plane
// the way kubelet.exe v1.36 does, failing where kubelet.exe fails.
//
// Wire it into hosts with Programs (winsim.HostConfig.Programs: the host runs
// it for its kubelet.exe, as a service, under nssm or from a script), or run
// one directly with Start.
//
// # What it reads
//
//   - The service command line (BinaryPathName): the executable must exist on
//     the host and contain a line "kubelet vX.Y.Z" (the sandbox's artifact
//     server serves such files); that is the kubeletVersion. Arguments are
//     parsed with the flag set of kubelet v1.36 on Windows (flagtable.go, generated from
//     k8s.io/kubernetes cmd/kubelet/app/options): flags removed from the
//     kubelet (--network-plugin, --cni-bin-dir, --pod-infra-container-image,
//     --image-pull-progress-deadline, --logtostderr, ...) fail the start with
//     "failed to parse kubelet flag: unknown flag: --x", deprecated ones log
//     pflag's warning. --node-labels is validated like
//     options.ValidateKubeletFlags (kubernetes.io labels outside the kubelet's
//     allowed set are refused).
//   - --config: a KubeletConfiguration (kubelet.config.k8s.io/v1beta1 only;
//     unknown fields earn the lenient-decoding warning). Flags given on the
//     command line win over the file. clusterDNS, clusterDomain, maxPods,
//     registerWithTaints, providerID, containerRuntimeEndpoint,
//     nodeLeaseDurationSeconds, system/kube reserved and
//     authentication.x509.clientCAFile (must exist) take effect.
//   - TLS bootstrap (pkg/kubelet/certificate/bootstrap): a --kubeconfig with an
//     unexpired client certificate is used as is; otherwise
//     --bootstrap-kubeconfig (server, CA data or CA file on the host, token)
//     requests a client certificate with a real CertificateSigningRequest
//     (signer kubernetes.io/kube-apiserver-client-kubelet, CN
//     system:node:<name>, O system:nodes, ECDSA key) that the real
//     kube-controller-manager approves and signs; the certificate and key go
//     to --cert-dir\kubelet-client-current.pem and --kubeconfig is written to
//     point at it, all on the host's disk.
//   - The container runtime: the endpoint must be containerd's named pipe and
//     the host's "containerd" service Running; its executable's "containerd
//     vX.Y.Z" line gives containerRuntimeVersion containerd://X.Y.Z.
//
// # What it does
//
// With its node credentials it registers the Node (name: --hostname-override
// or the computer name, lower-cased; labels from --node-labels plus
// kubernetes.io/os=windows, kubernetes.io/arch=amd64, kubernetes.io/hostname
// and node.kubernetes.io/windows-build=<major.minor.build>; taints from
// --register-with-taints; nodeInfo with the Windows build, osImage, kubelet
// and containerd versions and the BIOS UUID; capacity from the VM), keeps its
// Lease in kube-node-lease renewed every 10 s, posts status (Ready, or
// NotReady when containerd stops or the NeverReady fault is set), and runs
// the pods bound to it: Running with an address from the Node's
// spec.podCIDR, and deleted (grace 0, UID precondition) once marked for
// deletion, so drains complete.
//
// # How it fails
//
// Errors kubelet.exe exits with at once (flags, executable, config file)
// make Start return an error, so Start-Service fails. Errors after that (an
// unreachable server, a wrong token, a missing CA, no container runtime) are
// logged as "command failed" and the kubelet is restarted with back-off, as
// the service's recovery actions do; the Node never appears. Everything is
// logged in klog's text format to Config.Log (the guest's C:\var\log\kubelet\kubelet.log with
// the hooks).
package kubeletsim
