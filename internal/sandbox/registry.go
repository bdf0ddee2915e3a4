package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/registry"
)

// RegistryUsername is the sandbox mirror's user.
const RegistryUsername = "puller"

// RegistryImages are the repositories and tags the sandbox's mirror holds,
// each a Windows Server 2022 image of the sandbox's own: the pause image of
// containerd 2.3's default tag and the HostProcess base image the networking
// agents run (internal/networking's DefaultHostProcessImage's repository and
// tag). Their digests are the mirror's, not upstream's: a reference pinned to
// upstream's digest is not found there.
var RegistryImages = map[string]string{
	"pause": "3.10.2",
	"oss/kubernetes/windows-host-process-containers-base-image": "v1.0.0",
}

// startRegistry starts the mirror with a password of its own and pushes
// RegistryImages.
func startRegistry(ctx context.Context) (*registry.Mirror, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	m, err := registry.Start(RegistryUsername, hex.EncodeToString(b))
	if err != nil {
		return nil, err
	}
	for repo, tag := range RegistryImages {
		if _, err := m.Push(ctx, repo, tag, "10.0.20348.1"); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	return m, nil
}
