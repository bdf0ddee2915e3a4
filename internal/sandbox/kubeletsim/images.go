package kubeletsim

import (
	"fmt"

	"github.com/distribution/reference"
)

// servedImages are the images the sandbox's registry serves to the
// simulated container runtime, by repository and tag, with the digest of
// the image index it serves for the tag. agnhost 2.53's is the index
// registry.k8s.io serves (containerd reports it as the ImageID of pods that
// pulled registry.k8s.io/e2e-test-images/agnhost:2.53). Nothing else of
// agnhost is served: a pod naming another tag or digest does not start.
var servedImages = map[string]map[string]string{
	agnhostRepository: {"2.53": "sha256:99c6b4bb4a1e1df3f0b3752168c89358794d02258ebebc26bf21c29399011a85"},
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
