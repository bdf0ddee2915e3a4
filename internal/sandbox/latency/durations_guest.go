package latency

import "time"

// The Windows guest's side of the model: Windows Server, VMware Tools in the
// guest and the kubelet. Kept apart from vCenter's entries (durations.go) so
// the two sides grow without touching each other; init adds them to
// RealDurations. An "estimate" says so and gives its reasoning: where no
// published figure times an operation, the model takes a value inside the
// bounds the published ones set.
const (
	// WindowsBoot is a power-on to VMware Tools running in the guest (no
	// customization): Windows boots, the VMTools service starts.
	WindowsBoot Op = "windows.boot"
	// SysprepGeneralize is VMware Tools' deployPkg running sysprep
	// /generalize /oobe /reboot in a customized clone's first boot, up to
	// sysprep's reboot.
	SysprepGeneralize Op = "windows.sysprep.generalize"
	// SysprepSpecialize is the boot after sysprep's: Windows Setup's
	// specialize pass (computer name, network, time zone) and its reboot
	// into OOBE.
	SysprepSpecialize Op = "windows.sysprep.specialize"
	// SysprepOOBE is the oobeSystem pass (the Administrator password) up to
	// the logon screen with VMware Tools running: the end of customization.
	SysprepOOBE Op = "windows.sysprep.oobe"
	// WindowsRestart is Restart-Computer (or sysprep's reboot): shutdown,
	// firmware, boot, VMware Tools running again.
	WindowsRestart Op = "windows.restart"
	// ServiceStart is a Windows service from StartService to SERVICE_RUNNING.
	ServiceStart Op = "windows.service.start"
	// UpdateInstall is one cumulative update (an LCU, with its SSU) installed
	// offline by wusa or DISM, up to the restart it asks for.
	UpdateInstall Op = "windows.update.install"
	// UpdateRestart is the restart that completes an update ("Working on
	// updates" before and after the reboot), to VMware Tools running again.
	UpdateRestart Op = "windows.update.restart"

	// GuestOperation is one vCenter guest operation answered by VMware
	// Tools (StartProgramInGuest, ListProcessesInGuest, a file transfer's
	// initiation): vCenter to hostd to the VMX to vmtoolsd and back.
	GuestOperation Op = "vmtools.guest-operation"
	// ProcessPollInterval is how soon after one ListProcessesInGuest of a VM
	// VMware Tools answers the next: a poll sooner is refused with vix error
	// 3016. The model judges it unscaled (Model.Real): the provider's poll
	// intervals are real time whatever the factor.
	ProcessPollInterval Op = "vmtools.process-poll-interval"

	// KubeletRegister is the kubelet's start to its Node registered.
	KubeletRegister Op = "kubelet.register"
	// KubeletStatusUpdate is the kubelet's nodeStatusUpdateFrequency: how
	// long a change of its Ready condition waits for the next status sync.
	KubeletStatusUpdate Op = "kubelet.status-update"
)

var guestDurations = map[Op]Duration{
	WindowsBoot: {P50: 60 * time.Second, P99: 150 * time.Second,
		Source: "estimate: after a power-on the guest OS and the VMware Tools daemon take some time to start, then up to 30 s more to report the guest's IP (VMware's open-vm-tools maintainer, vmware/open-vm-tools#718); Windows Server 2016 instances reached 'Ready' about 5 minutes after launch with EC2's own customization (test-kitchen/kitchen-ec2#575), which bounds a plain boot well below it"},
	SysprepGeneralize: {P50: 90 * time.Second, P99: 180 * time.Second,
		Source: "estimate: with the boot, specialize and OOBE below it adds up to the 6-15 minutes a Windows first boot with customization takes (issue 35: AWS EC2 launch documentation; buildkite/elastic-ci-stack-for-aws#595; kitchen-ec2#575's ~5 minutes to Ready; 'up to 15 minutes' for a sysprepped Windows AMI's password and SSH, gist thejohnfreeman); TestCustomizationPhasesAddUpToAFirstBoot holds the sum to FirstBootCustomized"},
	SysprepSpecialize: {P50: 150 * time.Second, P99: 240 * time.Second,
		Source: "estimate: specialize and its reboot into OOBE (Microsoft Learn, how configuration passes work: specialize runs after generalize at the next boot, then the machine restarts into oobeSystem); share of the 6-15 minutes of issue 35, as SysprepGeneralize"},
	SysprepOOBE: {P50: 120 * time.Second, P99: 180 * time.Second,
		Source: "estimate: oobeSystem to the logon screen and VMware Tools running, which ends the customization (CustomizationSucceeded); share of the 6-15 minutes of issue 35, as SysprepGeneralize"},
	WindowsRestart: {P50: 60 * time.Second, P99: 150 * time.Second,
		Source: "estimate: a shutdown (seconds) and a boot as WindowsBoot; a restart with no update to complete"},
	ServiceStart: {P50: time.Second, P99: 10 * time.Second,
		Source: "estimate: the Service Control Manager waits 30 s for a service to report running before it fails the start (ERROR_SERVICE_REQUEST_TIMEOUT 1053, Microsoft Learn 'Service startup'), which bounds every healthy start; the kubelet and containerd report running within seconds"},
	UpdateInstall: {P50: 15 * time.Minute, P99: 40 * time.Minute,
		Source: "a Windows Server 2022 'Download and Install Windows Updates' step took 35 min 38 s (adoptium/infrastructure#3462, 2024); install time grows with the LCU's size over the release's life (Microsoft Tech Community, 'How to improve Windows cumulative update installation times', 2021); one LCU from a local mirror: estimate 15 min median, 40 min tail"},
	UpdateRestart: {P50: 3 * time.Minute, P99: 6 * time.Minute,
		Source: "the reboot after Windows Server 2022's updates took 5 min 17 s (adoptium/infrastructure#3462); estimate 3 min median"},
	GuestOperation: {P50: 150 * time.Millisecond, P99: time.Second,
		Source: "estimate: each guest operation crosses vCenter, hostd and the VMX to vmtoolsd (vSphere Web Services API, GuestOperationsManager); govmomi's toolbox.Client.Run polls every 500 ms and govc guest.ps -X every 1 s (govmomi#1481), intervals that only make sense above one round trip"},
	ProcessPollInterval: {P50: 300 * time.Millisecond, P99: 500 * time.Millisecond,
		Source: "govc guest.ps -X polling ListProcessesInGuest every 250 ms was answered 'A general system error occurred: vix error codes = (3016, 0)' (SystemError) while VMware Tools ran (vmware/govmomi#759, vCenter 6.0); the fix polls every 1 s (govmomi#1481) and govmomi's toolbox.Client.Run polls every 500 ms; estimate: VMware Tools needs more than 250 ms and tolerates 500 ms"},
	KubeletRegister: {P50: 2 * time.Second, P99: 15 * time.Second,
		Source: "estimate: the kubelet registers its Node at start and retries with a back-off of up to 7 s (kubelet registerWithAPIServer); the tail is one or two retries"},
	KubeletStatusUpdate: {P50: 10 * time.Second, P99: 10 * time.Second,
		Source: "the kubelet's nodeStatusUpdateFrequency defaults to 10 s (Kubernetes KubeletConfiguration reference): a change of the Ready condition is posted at the next sync"},
}

// Rate is a throughput the model moves bytes at.
type Rate string

// The guest's throughputs.
const (
	// DownloadLink is what the guest downloads at from the site's artifact
	// server (Invoke-WebRequest, curl.exe).
	DownloadLink Rate = "windows.download"
	// ImagePull is containerd's pull of a Windows image, download and layer
	// extraction together, by the image's compressed size.
	ImagePull Rate = "containerd.image-pull"
)

// Throughput is a rate at real scale, in bytes per second: its median and
// its slow tail (the 99th percentile of time is the 1st of rate).
type Throughput struct {
	P50, P99 float64
	Source   string
}

// RealRates are the guest's throughputs with their sources.
var RealRates = map[Rate]Throughput{
	DownloadLink: {P50: 50e6, P99: 5e6,
		Source: "estimate: a site's artifact server over the datacenter's network or a proxy, 400 Mbit/s median, 40 Mbit/s tail; a 70 MB zip downloaded in 0.2 s on a cloud runner (actions/runner-images#9467) is the fast end"},
	ImagePull: {P50: 5e6, P99: 1.5e6,
		Source: "Windows pulls are slow for their layers' size and extraction: servercore:ltsc2016 took 7 min 25 s to pull (dotnet/docker-tools#2006), a 1.x GB Windows image 16 minutes on a Windows Server 2019 runner (actions/runner-images#3728, ~1.5 MB/s: the tail), base images 10+ minutes (kubernetes-sigs/image-builder#382, issue 35); estimate 5 MB/s median"},
}

func init() {
	for op, d := range guestDurations {
		if _, dup := RealDurations[op]; dup {
			panic("latency: " + string(op) + " defined twice")
		}
		RealDurations[op] = d
	}
}

// Move is how long bytes take at rate r, played: the quantile's throughput
// (the tail plays the slow one), divided by the factor; 0 when off.
func (m *Model) Move(r Rate, bytes int64) time.Duration {
	if !m.On() || bytes <= 0 {
		return 0
	}
	t, ok := RealRates[r]
	if !ok {
		panic("latency: no throughput for " + string(r) + ": add it to durations_guest.go with its source")
	}
	bps := t.P50
	if m.Quantile == Tail {
		bps = t.P99
	}
	return m.Scale(time.Duration(float64(bytes) / bps * float64(time.Second)))
}
