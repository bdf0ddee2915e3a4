package acctest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/wincluster/terraform-provider-windows/examples/rbac"
	"github.com/wincluster/terraform-provider-windows/internal/provider"
)

// frameworkServer is what the framework's protocol 6 server implements:
// the provider protocol and the list-resource, action and state-store RPCs
// that tf6server looks for by type assertion.
type frameworkServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

// identityServer stands, in process, for what Terraform does with two
// configurations of one provider: it runs one provider process per
// configuration (https://developer.hashicorp.com/terraform/language/providers/configuration#alias-multiple-provider-configurations),
// each with its own credentials. The test framework serves the provider
// in process (reattach), one server for every configuration, where the
// last ConfigureProvider would win. So it keeps two servers: the admin
// configuration's (AdminProvider: a kubeconfig path that is the admin
// kubeconfig's) configures admin, any other configures everyday; the calls
// of the install-once resources (rbac.InstallOnceResources, which their
// docs apply with the admin configuration) go to admin once that is
// configured, every other call to everyday. A configuration without the
// admin one (a test that applies an install-once resource with the
// everyday identity on purpose) configures everyday alone, which then
// serves everything.
type identityServer struct {
	frameworkServer                 // everyday
	admin           frameworkServer // the admin configuration's
	adminConfigured atomic.Bool
}

func newIdentityServer() (tfprotov6.ProviderServer, error) {
	newServer := func() (frameworkServer, error) {
		s, err := providerserver.NewProtocol6WithError(provider.New("test")())()
		if err != nil {
			return nil, err
		}
		fs, ok := s.(frameworkServer)
		if !ok {
			return nil, fmt.Errorf("the framework's server %T lacks the list-resource, action or state-store RPCs", s)
		}
		return fs, nil
	}
	everyday, err := newServer()
	if err != nil {
		return nil, err
	}
	admin, err := newServer()
	if err != nil {
		return nil, err
	}
	return &identityServer{frameworkServer: everyday, admin: admin}, nil
}

// isAdminConfig reports whether a provider configuration is AdminProvider's:
// its msgpack holds the admin kubeconfig's path as a string.
func isAdminConfig(config *tfprotov6.DynamicValue) bool {
	path := adminKubeconfig()
	return path != "" && config != nil && bytes.Contains(config.MsgPack, []byte(path))
}

func (s *identityServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	if isAdminConfig(req.Config) {
		resp, err := s.admin.ConfigureProvider(ctx, req)
		if err == nil {
			s.adminConfigured.Store(true)
		}
		return resp, err
	}
	return s.frameworkServer.ConfigureProvider(ctx, req)
}

// route is the server of typeName's calls.
func (s *identityServer) route(typeName string) frameworkServer {
	if s.adminConfigured.Load() && slices.Contains(rbac.InstallOnceResources, typeName) {
		return s.admin
	}
	return s.frameworkServer
}

func (s *identityServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return s.route(req.TypeName).ReadResource(ctx, req)
}

func (s *identityServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return s.route(req.TypeName).PlanResourceChange(ctx, req)
}

func (s *identityServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return s.route(req.TypeName).ApplyResourceChange(ctx, req)
}

func (s *identityServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return s.route(req.TypeName).ImportResourceState(ctx, req)
}

func (s *identityServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	return s.route(req.TypeName).ListResource(ctx, req)
}
