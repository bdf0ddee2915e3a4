// Package imageref judges the container image references the provider
// writes into a node's configuration (containerd's sandbox image, images to
// pre-pull, the node agents' HostProcess image), so that a bad one is an
// error at plan time naming the attribute, not a node that cannot start
// pods. It parses them as containerd and the kubelet do, with
// github.com/distribution/reference.
package imageref

import (
	"fmt"

	"github.com/distribution/reference"
)

// Validate returns an error, naming attribute, unless ref is an image
// reference containerd accepts: [registry/]repository[:tag][@digest], the
// registry defaulting to docker.io as for `ctr` and the kubelet. The
// reference must be written out in full (a short name like "pause:3.10" is
// refused: containerd's sandbox image is pulled as written) and carry a tag
// or a digest (without either it would mean whatever "latest" is today).
func Validate(attribute, ref string) error {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return fmt.Errorf("%s %q is not a container image reference ([registry/]repository[:tag][@sha256:digest]): %v", attribute, ref, err)
	}
	if named.String() != ref {
		return fmt.Errorf("%s %q is a short name: write it out in full, as %q", attribute, ref, named.String())
	}
	_, tagged := named.(reference.Tagged)
	_, digested := named.(reference.Digested)
	if !tagged && !digested {
		return fmt.Errorf("%s %q names no tag or digest: add one (a digest, @sha256:..., pins the image's content)", attribute, ref)
	}
	return nil
}

// Pinned reports whether ref (a valid reference) names its content by
// digest, so that a registry cannot change what it pulls.
func Pinned(ref string) bool {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return false
	}
	_, ok := named.(reference.Digested)
	return ok
}
