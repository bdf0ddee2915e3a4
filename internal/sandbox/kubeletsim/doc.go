// Package kubeletsim is the kubelet of the simulated Windows hosts
// (internal/sandbox/winsim): when a host's "kubelet" service starts, it reads what
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
//     judged by the kubelet's own code: kubeletcheck
//     (tools/controlplane/kubeletcheck, built by tools/controlplane/build.sh
//     next to the control plane; without it the kubelet does not start) runs
//     NewKubeletCommand's checks of k8s.io/kubernetes v1.36.3: the flag set
//     (options.NewKubeletFlags().AddFlags, AddKubeletConfigFlags,
//     AddGlobalFlags), ValidateKubeletFlags, the --config loader
//     (configfiles: strict decoding, then lenient with a warning), flags over
//     the file (kubeletConfigFlagPrecedence) and
//     validation.ValidateKubeletConfiguration. Hand-kept, because the helper
//     is a Linux build: --windows-service and --windows-priorityclass
//     (cmd/kubelet/app/options/osflags_windows.go), no cadvisor flags
//     (globalflags_linux.go), eviction defaults (pkg/kubelet/eviction/
//     defaults_windows.go) and validation_windows.go's rules in place of
//     validation_linux.go's (whose cgroup v1 check fails every default
//     configuration on a cgroup v1 machine).
//   - Network readiness: containerd's CNI directories from its service's
//     --config (version 2 [plugins."io.containerd.grpc.v1.cri".cni]
//     bin_dir/conf_dir, version 3 [plugins."io.containerd.cri.v1.runtime".cni]
//     bin_dirs/conf_dir) or its Windows defaults; go-cni loads the first
//     .conf/.conflist/.json of conf_dir. Until it loads and every plugin type
//     exists as <type>.exe the Node is NotReady ("container runtime network
//     not ready: NetworkReady=false reason:NetworkPluginNotReady message:
//     Network plugin returns error: cni plugin not initialized") and pods off
//     the host network wait (event NetworkNotReady); delegate and IPAM
//     plugins are needed at the first sandbox (FailedCreatePodSandBox).
//   - gMSA (pods_gmsa.go): a container whose windowsOptions hold a credential
//     spec starts only when the host retrieves the gMSA's password from its
//     domain (Config.GMSA: a member of the spec's domain, its account granted
//     by the gMSA's msDS-GroupMSAMembership); otherwise RunContainerError
//     "failed to create containerd task: failed to create shim task:
//     hcs::CreateComputeSystem <id>: <Win32 text>: unknown" and a Failed
//     event, retried after the kubelet's 10 s back-off: 1355 outside the
//     domain, 5 "Access is denied." outside the hosts group (sources in
//     pods_gmsa.go). HostAccountConfig and gMSA in HostProcess containers
//     are refused (CreateContainerError), not modelled.
//   - HostProcess pods (pods_hostprocess.go) run their command on the host
//     through winsim's Host.Run with the container's env, downward API,
//     CONTAINER_SANDBOX_MOUNT_POINT=C:\C\<id>\ and their configMap and
//     projected volumes (TokenRequest bound to the pod, with the node's
//     credentials) under it, over the files of its image where the
//     simulator models the image (images_content.go: "the container image
//     contents ... are available at $CONTAINER_SANDBOX_MOUNT_POINT",
//     kubernetes.io "Create a Windows HostProcess Pod"; antrea-windows
//     v2.2.0 as its Dockerfile.build.windows lays it out); exits restart with CrashLoopBackOff
//     (CrashLoopBackOff knob), logs go to C:\var\log\pods. Init containers
//     run first, one after another, each to a successful exit (the pod
//     Pending, not Initialized, meanwhile; kuberuntime_manager.go
//     computePodActions); lifecycle hooks are refused (CreateContainerError),
//     not modelled. Their containers
//     outlive the kubelet, as containerd's shims keep them on Windows
//     (shims.go): a kubelet restart in the same boot adopts them (same
//     container ID, no restart counted) and ends those whose pods are gone;
//     a new boot of the host ends them all.
//   - Node agents (AgentPrograms, for winsim.HostConfig.Programs): kube-proxy
//     (cmd/kube-proxy/app, pkg/proxy/winkernel: GET its Node, wait for the HNS
//     network, list+watch Services, EndpointSlices, ServiceCIDRs and its Node;
//     syncProxyRules' HNS load balancers from the Services and their ready
//     endpoints into winsim's HNS state (winsim/hns.go): at start every load
//     balancer is deleted, then each changed Service port gets its remote
//     endpoints and policy lists (a NodePort with no VIP, localRoutedVIP),
//     an unchanged one is left alone ("Policy already applied"), sessionAffinity,
//     external IPs, ingress IPs, the Local traffic policies and IPv6 are
//     refused per Service: hns_loadbalancers.go; the KubeProxyStopped fault
//     and a stale load balancer: hns_faults.go)
//     and flanneld (flannel main.go, pkg/subnet/kube, vxlan_windows.go: node
//     name, net-conf, list+watch all Nodes, lease annotations and
//     NetworkUnavailable through nodes/status, HNS network in
//     C:\ProgramData\winsim\hns.json, subnet.env) with exactly the
//     credentials their kubeconfig names; a refusal exits 1 with the
//     reflector's error on stderr.
//   - Antrea's Windows agent and its OVS daemons (agents_antrea.go,
//     agents_ovs.go; antrea-io/antrea): antrea-agent reads antrea-agent.conf,
//     refuses what cmd/antrea-agent/options_windows.go checkUnsupportedFeatures
//     refuses ("Failed to validate: unsupported features on Windows: {...}",
//     exit 255 as klog.Fatalf), hybrid and an agent without AntreaProxy (not
//     modelled); builds its client as pkg/util/k8s CreateRestConfig does
//     (clientConnection.kubeconfig, else in-cluster from the token and CA in
//     C:\var\run\secrets\kubernetes.io\serviceaccount, the host replaced by
//     kubeAPIServerOverride); needs ovsdb-server's db.sock and
//     ovs-vswitchd running, its Node with a pod CIDR (agent.go's wording),
//     the Open vSwitch Extension installed (winsim.OVSState: the driver's
//     installation, Install-OVS.ps1, is not modelled); in noEncap patches
//     node.antrea.io/mac-address through nodes/status; creates the
//     Transparent HNS network antrea-hnsnetwork with the pod CIDR
//     (pkg/agent/util/net_windows.go, agent_windows.go) and the bridge br-int;
//     lists and watches Services, EndpointSlices, Nodes and its pods; keeps
//     AntreaProxy's groups (ClusterIPs; NodePorts with proxyAll) and the node
//     route controller's routes (encap: the tunnel; noEncap: only to Nodes
//     with the MAC annotation, node_route_controller.go getNodeMAC) in
//     winsim's OVS state, and serves CNI while it runs (the antrea CNI
//     plugin's ADD fails without it, cni.go). ovsdb-tool create, ovsdb-server
//     (--remote=punix:, --pidfile; --detach refused), ovs-vswitchd (needs
//     db.sock) and ovs-vsctl (--no-wait init, set Open_vSwitch .) follow
//     Run-AntreaOVS.ps1 and OVS's manuals; anything else is refused. A pod's
//     packets on such a host go through AntreaProxy's groups and routes
//     (podnet.go). Antrea's controller and NetworkPolicies are not modelled.
//   - Calico for Windows (agents_calico.go, projectcalico/calico v3.32):
//     calico-node.exe -startup [-complete-startup] (node/pkg/lifecycle/startup,
//     startup_windows.go ensureNetworkForOS) against the Kubernetes datastore
//     (DATASTORE_TYPE=kubernetes, KUBECONFIG; etcdv3 and in-cluster
//     configuration are refused): the IPAM configuration as
//     libcalico-go/lib/ipam/ipam.go GetIPAMConfig has it (none: the default
//     with strictAffinity false is created; strictAffinity false: "global
//     strict affinity should not be false for Windows node"), the host's
//     confirmed affine block or a new one claimed from the first enabled IPv4
//     pool (an IPAMBlock with Windows' reserved .0-.2 and broadcast, then the
//     BlockAffinity, in the real API server; upstream's hostname-seeded start
//     block is not modelled: the first free one is taken), the VNI
//     (VXLAN_VNI; below 4096 "Windows does not support VXLANVNI < 4096",
//     cni-plugin/pkg/dataplane/windows), the "Calico" Overlay HNS network over
//     the block with the VNI as VSID and its remote endpoint Calico_ep at .2
//     (SetupVxlanNetwork), the node's Calico annotations (IPv4Address, the
//     VXLAN tunnel at the block's .1 and its MAC: EnsureVXLANTunnelAddr) and
//     NetworkUnavailable cleared with reason CalicoIsUp; the backends
//     "windows-bgp" (confd, BGP) and every other mode (-confd, ...) are
//     refused as not modelled. calico-node.exe -felix finds the HNS network
//     by KUBE_NETWORK's regular expression and keeps one RemoteSubnetRoute
//     policy per remote node's confirmed block to that node's VTEP
//     (felix/dataplane/windows/vxlan_mgr.go), following Nodes and
//     BlockAffinities on watches; Felix's policy (ACLs) is not modelled.
//     Calico's CNI plugin (cni_calico.go: calico.exe with calico-ipam, mode
//     vxlan, windows_use_single_network) gives a pod the block's first free
//     ordinal by updating the IPAMBlock with the pod's handle, through the
//     kubeconfig its configuration names, and releases it at the pod's
//     deletion; a pod's packet to another node's block leaves only through a
//     RemoteSubnetRoute Felix programmed (podnet.go).
//   - Pods of registry.k8s.io/e2e-test-images/agnhost with restartPolicy
//     Never (pods_agnhost.go): their containers run agnhost's connect
//     subcommand (test/images/agnhost/connect; the sandbox's one model of
//     it, internal/sandbox/agnhost, which the Linux node's pods run too)
//     in order, init containers
//     first, in the pod's network (podnet.go): the host's HNS network must
//     exist, a ClusterIP or NodePort goes through the HNS load balancers
//     kube-proxy programmed to one of their endpoints, another node's pod
//     address over the Overlay (the sandbox's Linux node, where real CoreDNS
//     answers, or another Windows node's IIS pod); names resolve through the kubelet's clusterDNS with the
//     pod's search list, each query a real one. A failed container's output
//     is its termination message under FallbackToLogsOnError. Any other
//     agnhost subcommand is refused. The images are pulled first as
//     containerd resolves them (images.go): by digest when the reference
//     has one, else by tag, from what the sandbox serves (agnhost 2.53 and
//     its index digest); anything else leaves the container in ErrImagePull
//     with containerd's "not found", and the pod Pending.
//   - Registry mirrors (registry_pull.go): when containerd's config.toml has
//     a registry config_path, every pod's sandbox (pause) image, which
//     containerd pulls itself at RunPodSandbox, and its containers' images
//     are pulled first through the hosts.toml of their registry, with
//     registry.configs."<host>".auth's credential (containerd
//     internal/cri/server/images/image_pull.go, docs/hosts.md; the resolver
//     is winsim.PullThroughHosts), once per host and image; the image's own
//     registry serves only what images.go has it serve. A refused pull is
//     the kubelet's FailedCreatePodSandBox or Failed event, the pod Pending,
//     tried again after the image back-off's first period (10 s,
//     pkg/kubelet/kubelet.go imageBackOff).
//   - Pods of mcr.microsoft.com/windows/servercore/iis whose containers keep
//     the image's entrypoint (pods_iis.go; microsoft/iis-docker
//     windowsservercore-ltsc2022/Dockerfile: the Web-Server feature,
//     EXPOSE 80, ServiceMonitor.exe w3svc): pulled as above (latest and
//     windowsservercore-ltsc2022, with the sandbox registry's own digest),
//     then Running and Ready with IIS's Default Web Site on the pod's port
//     80 (iisstart.htm at /, "Server: Microsoft-IIS/10.0"), a real HTTP
//     server behind the pod's address, ended with the pod. A packet for one
//     of the host's pod addresses (from its own pods, or from the overlay
//     through Dataplanes) is delivered only while the host's HNS network
//     exists, and reaches only those servers: anything else is refused.
//     An IIS pod that sets command or args runs as other pods do.
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
// the service's recovery actions do; the Node never appears.
//
// With the host's Faults.HNSLostOnReboot, the HNS networks and load
// balancers of an earlier boot (winsim.Host.BootID) are gone when the
// kubelet first starts in a new one (HNS keeps flannel's non-persistent
// network in memory), flanneld fails to create the network again
// ("failed to create HostComputeNetwork flannel.4096: hcnCreateNetwork failed
// in Win32: Element not found. (0x490)", hcsshim's HcsError wording) and
// exits 1, so its pod goes into CrashLoopBackOff, and kube-proxy waits for
// the network without turning Ready ("Network flannel.4096 not found"),
// while the Node stays Ready: sig-windows-tools#89 and #94, flannel#1423. Everything is
// logged in klog's text format to Config.Log (the guest's C:\var\log\kubelet\kubelet.log with
// the hooks).
package kubeletsim
