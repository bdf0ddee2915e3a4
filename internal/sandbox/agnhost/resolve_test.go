package agnhost

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is a DNS server on a loopback UDP socket that answers an A
// query for one name and NXDOMAIN for every other, recording the names
// asked for.
type dnsServer struct {
	conn  net.PacketConn
	mu    sync.Mutex
	asked []string
}

func startDNS(t *testing.T, name string, addr netip.Addr) *dnsServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: conn}
	t.Cleanup(func() { _ = conn.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			s.mu.Lock()
			s.asked = append(s.asked, q.Name.String()+" "+q.Type.String())
			s.mu.Unlock()
			resp := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: dnsmessage.RCodeNameError}
			found := strings.EqualFold(q.Name.String(), name) && q.Type == dnsmessage.TypeA
			if found {
				resp.RCode = dnsmessage.RCodeSuccess
			}
			b := dnsmessage.NewBuilder(nil, resp)
			b.EnableCompression()
			_ = b.StartQuestions()
			_ = b.Question(q)
			if found {
				_ = b.StartAnswers()
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 30}, dnsmessage.AResource{A: addr.As4()})
			}
			out, err := b.Finish()
			if err == nil {
				_, _ = conn.WriteTo(out, from)
			}
		}
	}()
	return s
}

func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

func (s *dnsServer) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, a := range s.asked {
		if name, ok := strings.CutSuffix(a, " TypeA"); ok {
			out = append(out, name)
		}
	}
	return out
}

func TestResolve(t *testing.T) {
	want := netip.MustParseAddr("10.96.0.20")
	search := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"}
	for _, tc := range []struct {
		name, host string
		asked      []string
		err        string
	}{
		{"a short name tries the search list first", "web", []string{"web.ns1.svc.cluster.local."}, ""},
		{"a name with fewer dots than ndots too", "web.ns1", []string{"web.ns1.ns1.svc.cluster.local.", "web.ns1.svc.cluster.local."}, ""},
		{"an absolute name as it is", "web.ns1.svc.cluster.local.", []string{"web.ns1.svc.cluster.local."}, ""},
		{"a name found nowhere names the pod's server", "nowhere", []string{"nowhere.ns1.svc.cluster.local.", "nowhere.svc.cluster.local.", "nowhere.cluster.local.", "nowhere."},
			"lookup nowhere on 10.96.0.10:53: no such host"},
		{"five dots: only as it is (the search list after it is not modelled)", "a.b.c.d.e.f", []string{"a.b.c.d.e.f."}, "lookup a.b.c.d.e.f on 10.96.0.10:53: no such host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startDNS(t, "web.ns1.svc.cluster.local.", want)
			got, err := Resolve(t.Context(), s.resolver(), "10.96.0.10", search, tc.host)
			if tc.err == "" && (err != nil || got != want) || tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Errorf("Resolve(%q) = %v, %v; want %v, error %q", tc.host, got, err, want, tc.err)
			}
			if asked := s.names(); !slices.Equal(asked[:min(len(asked), len(tc.asked))], tc.asked) {
				t.Errorf("Resolve(%q) asked for %q, want %q first", tc.host, asked, tc.asked)
			}
		})
	}
}
