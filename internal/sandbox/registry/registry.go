// Package registry is the sandbox's private registry mirror: an OCI
// distribution registry (go-containerregistry's pkg/registry, the in-memory
// registry its own tests and ko's run) behind HTTP basic authentication, as a
// site's mirror (Harbor, Nexus, distribution's htpasswd) refuses a pull
// without its credential. It holds images made for the sandbox: the pause
// image and the HostProcess base image under their upstream repositories and
// tags, each a Windows image, so containerd's pulls through a hosts.toml
// mirror are answered by a real registry.
package registry

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcr "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Realm is the basic-auth realm the mirror names in its challenge.
const Realm = "sandbox-mirror"

// Pull is one manifest request the mirror answered, as its access log has it.
type Pull struct {
	User   string // "" for an anonymous request
	Method string // HEAD or GET
	Path   string // /v2/<repository>/manifests/<reference>
	NS     string // containerd's ?ns=, the upstream registry it mirrors
	Status int
}

// Mirror is a running registry mirror.
type Mirror struct {
	Addr     string // host:port on loopback
	Username string
	password string

	srv *http.Server
	mu  sync.Mutex
	log []Pull
}

// Start serves a mirror on a free loopback port that admits username and
// password only.
func Start(username, password string) (*Mirror, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Mirror{Addr: ln.Addr().String(), Username: username, password: password}
	m.srv = &http.Server{Handler: m.handler(ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))), ReadHeaderTimeout: 0}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// Password is the mirror's password, for the tests and the env file.
func (m *Mirror) Password() string { return m.password }

// Close stops the mirror.
func (m *Mirror) Close() error { return m.srv.Close() }

// handler answers /v2/ as distribution's basic-auth access controller does
// (distribution registry/auth/htpasswd: a request without valid
// credentials gets 401, WWW-Authenticate: Basic realm="...", and the
// UNAUTHORIZED error of the distribution spec's error codes), then serves
// the registry, logging each manifest request.
func (m *Mirror) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(m.Username)) != 1 || subtle.ConstantTimeCompare([]byte(pass), []byte(m.password)) != 1 {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", Realm))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
				"code": "UNAUTHORIZED", "message": "authentication required", "detail": nil,
			}}})
			m.record(Pull{User: user, Method: r.Method, Path: r.URL.Path, NS: r.URL.Query().Get("ns"), Status: http.StatusUnauthorized}, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		m.record(Pull{User: user, Method: r.Method, Path: r.URL.Path, NS: r.URL.Query().Get("ns"), Status: rec.status}, r)
	})
}

func (m *Mirror) record(p Pull, r *http.Request) {
	if !strings.Contains(r.URL.Path, "/manifests/") {
		return
	}
	m.mu.Lock()
	m.log = append(m.log, p)
	m.mu.Unlock()
}

// Pulls is the mirror's access log of manifest requests, in order.
func (m *Mirror) Pulls() []Pull {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Pull(nil), m.log...)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Push stores a Windows image (windows/amd64, osVersion: "10.0.20348.1")
// made of one random layer under repository:tag (repository without a
// registry host: "pause", "oss/kubernetes/windows-host-process-containers-base-image")
// and returns its digest. The sandbox's images are its own: their content
// stands in for upstream's, whose bytes (and digests) it does not have.
func (m *Mirror) Push(ctx context.Context, repository, tag, osVersion string) (v1.Hash, error) {
	img, err := random.Image(1024, 1)
	if err != nil {
		return v1.Hash{}, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.OSVersion = "windows", "amd64", osVersion
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return v1.Hash{}, err
	}
	ref, err := name.ParseReference(m.Addr+"/"+repository+":"+tag, name.Insecure)
	if err != nil {
		return v1.Hash{}, err
	}
	auth := authn.FromConfig(authn.AuthConfig{Username: m.Username, Password: m.password})
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuth(auth)); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}
