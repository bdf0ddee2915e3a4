package latency

import "time"

// The operations the model times. Each has its real durations in
// RealDurations with their source; add an operation there and here together.
const (
	// vCenter tasks.
	CloneFull   Op = "vcenter.clone.full"   // CloneVM_Task of a Windows template, full copy
	CloneLinked Op = "vcenter.clone.linked" // CloneVM_Task from a snapshot, linked clone

	// Windows Server.
	FirstBootCustomized Op = "windows.first-boot.customized" // power-on to the end of guest customization: specialize and OOBE with their reboots
)

// RealDurations are the operations' durations at real scale, each with its
// source. Figures the issue that asked for the model gave (issue 35) are
// quoted as it cites them.
var RealDurations = map[Op]Duration{
	CloneFull: {P50: 120 * time.Second, P99: 180 * time.Second,
		Source: "a full clone of a Windows template takes 88-180 s: puppetlabs/vmpooler#333, chef/kitchen-vcenter#41"},
	CloneLinked: {P50: 15 * time.Second, P99: 52 * time.Second,
		Source: "a linked clone takes 5-52 s: puppetlabs/vmpooler#333, chef/kitchen-vcenter#41"},
	FirstBootCustomized: {P50: 8 * time.Minute, P99: 15 * time.Minute,
		Source: "a Windows first boot with customization takes several reboots and 6-15 minutes: AWS EC2 launch documentation; buildkite/elastic-ci-stack-for-aws#595"},
}

// Host limits: how many operations an ESXi host and vCenter run at once.
const (
	// ProvisioningUnitsPerHost, UnitsPerFullClone and UnitsPerLinkedClone:
	// an ESXi host has 16 provisioning units, a full clone takes 4 and a
	// linked clone 1, so a host runs 4 full clones at once and queues the
	// rest (VMware performance blog, "vCenter limits for tasks running at
	// the same time", 2021).
	ProvisioningUnitsPerHost = 16
	UnitsPerFullClone        = 4
	UnitsPerLinkedClone      = 1
	// PowerOnsPerHost is how many power-ons a host runs at once (same source).
	PowerOnsPerHost = 60
	// VCenterConcurrentTasks is how many tasks vCenter runs at once before it
	// queues the rest (same source: ~640).
	VCenterConcurrentTasks = 640
)
