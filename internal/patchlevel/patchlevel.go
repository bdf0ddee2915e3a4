// Package patchlevel tells how far a Windows node runs behind a golden image:
// the updates the image installed that the node's own image did not, and
// whether the node's update build revision (UBR) is below the image's.
//
// Two facts are compared, and neither needs the guest:
//   - the node's revision as its kubelet reports it: on Windows the Node's
//     status.nodeInfo.kernelVersion is major.minor.build.UBR, read from the
//     registry's CurrentVersion key at the kubelet's start
//     (kubernetes/kubernetes pkg/kubelet/winstats/version.go,
//     getKernelVersion). A node patched in place (sconfig, WSUS) shows its
//     new revision once its kubelet restarts with the reboot the update
//     needs. Where the kubelet reports no revision, the one its golden image
//     recorded stands in;
//   - the updates each image installed, as windows_golden_image records them
//     on the template (its manifest, an extraConfig value that every clone
//     carries): the node's are its VM's, the target's the template's.
//
// Cumulative updates make the revision the measure: a node at the image's
// revision has every fix the image's cumulative update brought, even if it
// got them another way. Updates that do not raise the revision (a servicing
// stack update) are judged by the KB lists alone.
package patchlevel

import (
	"slices"
	"strconv"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/winversion"
)

// Status is a node's patch level measured against an image.
type Status string

const (
	// Current: the node's revision is the image's and it lacks none of the
	// image's updates.
	Current Status = "current"
	// Behind: the node's revision is below the image's, or it lacks updates
	// the image installed.
	Behind Status = "behind"
	// Ahead: the node's revision is above the image's (patched in place, or
	// made from a newer image than the one compared against).
	Ahead Status = "ahead"
	// OtherRelease: the node runs another Windows Server release (build)
	// than the image; no update makes one the other.
	OtherRelease Status = "other-release"
	// Unknown: neither the kubelet nor an image record gives the node's
	// revision.
	Unknown Status = "unknown"
)

// Image is the golden image compared against.
type Image struct {
	BuildFull string   // 10.0.20348.4466
	Updates   []string // KBs, in the order installed
}

// Node is what is known of a node without its guest.
type Node struct {
	// KernelVersion is the Node's status.nodeInfo.kernelVersion.
	KernelVersion string
	// ImageBuildFull and ImageUpdates are what the node's VM's golden image
	// recorded ("" and nil for a VM not cloned from one).
	ImageBuildFull string
	ImageUpdates   []string
}

// Result is a node measured against an image.
type Result struct {
	// BuildFull is the node's build with its revision: the kubelet's when
	// it reports one, else its image's; "" when neither does.
	BuildFull string
	// Missing are the image's updates the node's image did not install, in
	// the image's order.
	Missing []string
	Status  Status
}

// Compare measures node against image.
func Compare(image Image, node Node) Result {
	r := Result{BuildFull: node.ImageBuildFull}
	if _, ok := revision(node.KernelVersion); ok {
		r.BuildFull = strings.TrimSpace(node.KernelVersion)
	}
	if build := winversion.TrimUBR(r.BuildFull); r.BuildFull != "" && build != winversion.TrimUBR(image.BuildFull) {
		r.Status = OtherRelease
		return r
	}
	for _, kb := range image.Updates {
		if !slices.ContainsFunc(node.ImageUpdates, func(have string) bool { return strings.EqualFold(have, kb) }) {
			r.Missing = append(r.Missing, kb)
		}
	}
	have, ok := revision(r.BuildFull)
	want, wantOK := revision(image.BuildFull)
	switch {
	case !ok || !wantOK:
		r.Status = Unknown
	case have < want:
		r.Status = Behind
	case have > want:
		r.Status = Ahead
	case len(r.Missing) > 0:
		r.Status = Behind
	default:
		r.Status = Current
	}
	return r
}

// revision is the update build revision of major.minor.build.UBR.
func revision(full string) (int, bool) {
	parts := strings.Split(strings.TrimSpace(full), ".")
	if len(parts) != 4 {
		return 0, false
	}
	ubr, err := strconv.Atoi(parts[3])
	return ubr, err == nil && ubr >= 0
}
