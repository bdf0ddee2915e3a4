// Package registrymirror answers, from where Terraform runs, whether an image
// resolves through the registry mirrors a golden image gives containerd,
// with the credentials it gives them: the plan's check that a node will be
// able to pull the pause and HostProcess images.
package registrymirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Mirror is one upstream registry's mirrors, in the order containerd tries
// them (hosts.toml).
type Mirror struct {
	Registry  string // "registry.k8s.io", or "_default"
	Endpoints []string
}

// Credential is what containerd sends to one mirror host.
type Credential struct{ Username, Password string }

// Outcome is what the check found for one image.
type Outcome int

const (
	// Resolved: a mirror answered the reference.
	Resolved Outcome = iota
	// NoMirror: no mirror is configured for the image's registry; containerd
	// goes to the registry itself, which this check does not judge.
	NoMirror
	// Refused: a mirror refused the credential (401 or 403), or every
	// mirror answered that it does not have the image: containerd then
	// falls back to the upstream server, which a site with a mirror
	// usually cannot reach.
	Refused
	// Unreachable: no mirror answered from where Terraform runs, which may
	// not be where the nodes run.
	Unreachable
)

// Result is an image's outcome with the mirrors' answers, in order.
type Result struct {
	Outcome Outcome
	Answers []string
}

// Resolve asks the image's mirrors (its registry's, else _default's) in
// order, as containerd's resolver does (core/remotes/docker/resolver.go:
// the next host after a 404, a 401 or 403, or a failed request), sending
// each the credential of its host through the registry's own challenge
// (basic or bearer token: go-containerregistry's transport, as containerd's
// docker authorizer answers WWW-Authenticate).
func Resolve(ctx context.Context, image string, mirrors []Mirror, creds map[string]Credential, rt http.RoundTripper) (Result, error) {
	ref, err := name.ParseReference(image, name.StrictValidation)
	if err != nil {
		return Result{}, fmt.Errorf("%q is not an image reference: %w", image, err)
	}
	var endpoints []string
	for _, want := range []string{ref.Context().RegistryStr(), "_default"} {
		for _, m := range mirrors {
			if m.Registry == want || (want == "index.docker.io" && m.Registry == "docker.io") {
				endpoints = m.Endpoints
				break
			}
		}
		if endpoints != nil {
			break
		}
	}
	if endpoints == nil {
		return Result{Outcome: NoMirror}, nil
	}
	res := Result{Outcome: Unreachable}
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil {
			return Result{}, err
		}
		opts := []name.Option{name.StrictValidation}
		if u.Scheme == "http" {
			opts = append(opts, name.Insecure)
		}
		target := u.Host + "/" + ref.Context().RepositoryStr() + refSuffix(ref)
		mref, err := name.ParseReference(target, opts...)
		if err != nil {
			return Result{}, err
		}
		auth := authn.Anonymous
		if c, ok := creds[u.Host]; ok {
			auth = authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Password})
		}
		ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth)}
		if rt != nil {
			ropts = append(ropts, remote.WithTransport(rt))
		}
		desc, err := remote.Head(mref, ropts...)
		if err == nil {
			res.Outcome = Resolved
			res.Answers = append(res.Answers, fmt.Sprintf("%s: %s", u.Host, desc.Digest))
			return res, nil
		}
		var terr *transport.Error
		if errors.As(err, &terr) {
			res.Outcome = Refused
			res.Answers = append(res.Answers, fmt.Sprintf("%s: %d %s", u.Host, terr.StatusCode, http.StatusText(terr.StatusCode)))
			continue
		}
		if res.Outcome != Refused {
			res.Outcome = Unreachable
		}
		res.Answers = append(res.Answers, fmt.Sprintf("%s: %s", u.Host, shorten(err.Error())))
	}
	return res, nil
}

func refSuffix(ref name.Reference) string {
	if d, ok := ref.(name.Digest); ok {
		return "@" + d.DigestStr()
	}
	return ":" + ref.Identifier()
}

func shorten(s string) string {
	if i := strings.LastIndex(s, ": "); i > 0 && len(s) > 200 {
		return s[i+2:]
	}
	return s
}
