package kubeletsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
)

// containerd's pulls through registry mirrors (config_path and hosts.toml),
// as its CRI plugin makes them. Sources, containerd v2.3.4:
//
//   - internal/cri/config/config.go: [plugins."io.containerd.cri.v1.images".registry]
//     config_path and configs."<host>".auth (username, password); in a
//     version 2 file [plugins."io.containerd.grpc.v1.cri".registry].
//   - internal/cri/server/images/image_pull.go: the credentials of a pull are
//     the CRI request's, else registry.configs[<host contacted>].auth; the
//     pod sandbox (pause) image is pulled by containerd itself with the
//     latter only.
//   - the hosts and their order: winsim.PullThroughHosts.
//
// Without config_path the simulation's pulls take the images as the
// upstream registries serving them, as before (images.go). With it, the
// image's own registry, when containerd falls back to it, serves what
// images.go serves (agnhost 2.53 by its upstream digest) and nothing else:
// the mirror must hold the rest.

// registrySettings is containerd's registry configuration.
type registrySettings struct {
	ConfigPath   string
	Auth         map[string][2]string // host -> username, password
	SandboxImage string
}

// imagePullBackOff is the kubelet's image pull back-off's first period
// (pkg/kubelet/kubelet.go: imageBackOff, flowcontrol.NewBackOff(backOffPeriod
// = 10s, MaxContainerBackOff)).
var imagePullBackOff = 10 * time.Second

// containerdRegistrySettings reads the registry section and the sandbox
// image from containerd's --config.
func containerdRegistrySettings(files FileSystem, containerdArgs []string) (registrySettings, error) {
	path := containerdConfigPath(containerdArgs)
	var s registrySettings
	data, err := files.ReadFile(path)
	if err != nil {
		return s, nil
	}
	type auth struct{ Username, Password string }
	type registry struct {
		ConfigPath string `toml:"config_path"`
		Configs    map[string]struct {
			Auth *auth `toml:"auth"`
		} `toml:"configs"`
	}
	var doc struct {
		Version int `toml:"version"`
		Plugins map[string]struct {
			Registry     *registry `toml:"registry"`
			SandboxImage string    `toml:"sandbox_image"`
			Pinned       struct {
				Sandbox string `toml:"sandbox"`
			} `toml:"pinned_images"`
		} `toml:"plugins"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return s, fmt.Errorf("failed to load TOML: %s: %w", path, err)
	}
	name := "io.containerd.grpc.v1.cri"
	if doc.Version >= 3 {
		name = "io.containerd.cri.v1.images"
	}
	p := doc.Plugins[name]
	s.SandboxImage = p.SandboxImage
	if doc.Version >= 3 {
		s.SandboxImage = p.Pinned.Sandbox
	}
	if r := p.Registry; r != nil {
		s.ConfigPath = r.ConfigPath
		for h, c := range r.Configs {
			if c.Auth != nil {
				if s.Auth == nil {
					s.Auth = map[string][2]string{}
				}
				s.Auth[h] = [2]string{c.Auth.Username, c.Auth.Password}
			}
		}
	}
	return s, nil
}

// ensureImages pulls, when containerd has a config_path, the pod's sandbox
// image (containerd's own pull at RunPodSandbox) and then its containers'
// images (the kubelet's EnsureImageExists, with no pull secret: the
// registry.configs credentials), each through the mirrors. It returns false,
// after recording the kubelet's event and status, when one cannot be
// pulled; the kubelet tries again after its back-off.
// mirrorPulled records what each host's containerd pulled through its
// mirrors (by the host's disk directory and the reference): its content
// store keeps them.
var mirrorPulled sync.Map

// pullThroughHosts is winsim.PullThroughHosts with containerd's settings,
// once per host and image. reach, when not nil, is the connection to the
// image's own registry (Kubelet.reachUpstream): a fallback to it from the
// mirrors goes through the site's proxy as any pull does.
func pullThroughHosts(ctx context.Context, files FileSystem, s registrySettings, hostDir, image string, reach func(context.Context, string) error) error {
	if _, ok := mirrorPulled.Load(hostDir + "\x00" + image); ok {
		return nil
	}
	// The upstream registry is what images.go has it serve (agnhost by
	// its upstream digest), as pulls without mirrors take it.
	upstream := func() (int, error) {
		if reach != nil {
			if err := reach(ctx, image); err != nil {
				return 0, err
			}
		}
		if _, err := pullImage(image); err != nil {
			return 404, nil
		}
		return 200, nil
	}
	if err := winsim.PullThroughHosts(ctx, files.ReadFile, s.ConfigPath, func(h string) [2]string { return s.Auth[h] }, upstream, image); err != nil {
		return fmt.Errorf("rpc error: code = Unknown desc = failed to pull and unpack image %q: %w", image, err)
	}
	mirrorPulled.Store(hostDir+"\x00"+image, true)
	return nil
}

func (w *podWorker) ensureImages(ctx context.Context, pod *corev1.Pod) (bool, error) {
	var args []string
	if w.n.k.cfg.Services != nil {
		if svc, ok := w.n.k.cfg.Services.Service(ContainerdService); ok {
			_, args = SplitCommandLine(svc.BinaryPathName)
		}
	}
	s, err := containerdRegistrySettings(w.n.k.cfg.Files, args)
	if err != nil || s.ConfigPath == "" {
		return true, nil // no mirrors: images.go's pulls, as before
	}
	key := pod.Namespace + "/" + pod.Name
	disk := w.n.k.cfg.Host.Disk
	if s.SandboxImage != "" {
		if err := pullThroughHosts(ctx, w.n.k.cfg.Files, s, disk, s.SandboxImage, w.n.k.reachUpstream); err != nil {
			w.event(ctx, pod, corev1.EventTypeWarning, "FailedCreatePodSandBox",
				fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image %q: failed to pull image %q: %v", s.SandboxImage, s.SandboxImage, err))
			w.queue.AddAfter(key, imagePullBackOff)
			return false, w.pending(ctx, pod)
		}
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if err := pullThroughHosts(ctx, w.n.k.cfg.Files, s, disk, c.Image, w.n.k.reachUpstream); err != nil {
			w.event(ctx, pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %v", c.Image, err))
			w.queue.AddAfter(key, imagePullBackOff)
			return false, w.imagePullFailed(ctx, pod, c.Name, err)
		}
	}
	return true, nil
}
