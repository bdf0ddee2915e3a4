package kubeletsim

import (
	"context"
	"fmt"
	"sync"

	"github.com/distribution/reference"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/latency"
)

// servedImages are the images the sandbox's registry serves to the
// simulated container runtime, by repository and tag, with the digest of
// the image index it serves for the tag. agnhost 2.53's is the index
// registry.k8s.io serves (containerd reports it as the ImageID of pods that
// pulled registry.k8s.io/e2e-test-images/agnhost:2.53). Nothing else of
// agnhost is served: a pod naming another tag or digest does not start.
//
// IIS (pods_iis.go) is served for latest and the Windows Server 2022 tag
// with one index of the sandbox's own: MCR moves both tags with every
// monthly update, so the digest is the sandbox registry's, not MCR's
// (sha256 of "terraform-provider-windows sandbox registry: <repository>").
var servedImages = map[string]map[string]string{
	agnhostRepository: {"2.53": "sha256:99c6b4bb4a1e1df3f0b3752168c89358794d02258ebebc26bf21c29399011a85"},
	iisRepository: {
		"latest":                     "sha256:86c96c8ee07fbaa67b24ece3ef0a2fa5f18deb864dac28e20405a46065ebb0b8",
		"windowsservercore-ltsc2022": "sha256:86c96c8ee07fbaa67b24ece3ef0a2fa5f18deb864dac28e20405a46065ebb0b8",
	},
}

// servedImageBytes are the compressed sizes of the served images, which
// the latency model's ImagePull times a first pull on a host by. agnhost
// 2.53's Windows image: estimate, 150 MB (a nanoserver base of about 120 MB
// compressed, mcr.microsoft.com/windows/nanoserver, and agnhost's own
// binaries).
// IIS: estimate, 2.3 GB (the Server Core base of
// mcr.microsoft.com/windows/servercore:ltsc2022, about 2.2 GB compressed, and
// the Web-Server feature's layer); seed 000 saw its first pull take 6 minutes.
var servedImageBytes = map[string]int64{agnhostRepository: 150e6, iisRepository: 2300e6}

// pulled records the images each host's containerd holds (by the host's
// disk directory): a second pod of the image starts without a pull, as
// containerd keeps its content store across kubelet restarts and reboots.
var pulled sync.Map

// playPull takes a first pull's time on the host (none when the model is
// off, or the image is there).
func playPull(ctx context.Context, m *latency.Model, hostDir, image, id string) error {
	if !m.On() {
		return nil
	}
	if _, had := pulled.LoadOrStore(hostDir+"\x00"+id, true); had {
		return nil
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil // pullImage refused it already
	}
	if err := m.Sleep(ctx, m.Move(latency.ImagePull, servedImageBytes[named.Name()])); err != nil {
		pulled.Delete(hostDir + "\x00" + id)
		return err
	}
	return nil
}

// pullImage resolves an image reference as containerd's CRI plugin does
// (PullImage): a reference with a digest is resolved by its digest alone
// (a tag beside it is ignored), one with a tag by the tag; the registry
// must have it. It returns the ImageID the kubelet reports
// (<repository>@<digest>), or the error containerd returns, which the
// kubelet shows as ErrImagePull.
func pullImage(image string) (string, error) {
	notFound := fmt.Errorf("rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", image, image, image)
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("rpc error: code = Unknown desc = failed to pull and unpack image %q: failed to parse image reference %q: %v", image, image, err)
	}
	tags, ok := servedImages[named.Name()]
	if !ok {
		return "", notFound
	}
	if d, ok := named.(reference.Digested); ok {
		for _, served := range tags {
			if served == d.Digest().String() {
				return named.Name() + "@" + served, nil
			}
		}
		return "", notFound
	}
	tag := "latest"
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if served, ok := tags[tag]; ok {
		return named.Name() + "@" + served, nil
	}
	return "", notFound
}
