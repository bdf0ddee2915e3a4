package vcsim

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"

	"github.com/vmware/govmomi/simulator"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/hooks"
)

// RequestHook sees a vSphere API request as it arrives over HTTP, before
// the simulator reads it: method is the SOAP method's name. Unlike a
// CallHook it may block, and so holds the request in flight: the client is
// still waiting for its reply, as it waits on a slow vCenter. ctx is done
// when the client gives up on the reply (it closed its connection): a test
// sees whether a client abandons a request that vCenter will carry out all
// the same.
type RequestHook func(ctx context.Context, method string)

// requestHooks wraps the simulator's SOAP endpoint. It is made before the
// simulator's HTTP server, whose mux it must join before serving starts.
type requestHooks struct{ hooks.List[RequestHook] }

// OnRequest adds a hook run for every SOAP request; the returned func
// removes it.
func (s *Server) OnRequest(h RequestHook) (remove func()) {
	return s.requests.Add(h)
}

// install registers the wrapper for POST sdkPath on the service's mux; the
// simulator registers its own handler for the path without a method, which
// the more specific pattern overrides for the only method it serves.
func (rh *requestHooks) install(svc *simulator.Service, sdkPath string) {
	if svc.ServeMux == nil {
		svc.ServeMux = http.NewServeMux()
	}
	svc.ServeMux.HandleFunc(http.MethodPost+" "+sdkPath, func(w http.ResponseWriter, r *http.Request) {
		if hooks := rh.All(); len(hooks) > 0 {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			method := soapMethod(body)
			for _, h := range hooks {
				h(r.Context(), method)
			}
		}
		svc.ServeSDK(w, r)
	})
}

// soapMethod names the first element inside a SOAP envelope's Body: the
// method called. It is "" when the body is not such an envelope (the
// simulator then answers the request with its own fault).
func soapMethod(body []byte) string {
	d := xml.NewDecoder(bytes.NewReader(body))
	inBody := false
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			if inBody {
				return se.Name.Local
			}
			inBody = se.Name.Local == "Body"
		}
	}
}
