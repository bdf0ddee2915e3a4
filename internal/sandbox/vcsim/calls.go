package vcsim

import (
	"maps"
	"sync"

	"github.com/vmware/govmomi/simulator"
)

// calls counts the SOAP requests clients send over HTTP, by method: the
// server side of a round-trip count, whatever client (the provider in a
// Terraform run, a test) sent them.
type calls struct {
	mu sync.Mutex
	n  map[string]int64
	// byAgent is n by the session's user agent, which tells the
	// provider's calls from the tests' own.
	byAgent map[string]map[string]int64
	// byOperation is byAgent by the calls' SOAP operationID, which vCenter
	// logs beside each call ("opID="); calls without one are left out.
	byOperation map[string]map[string]map[string]int64
}

func (c *calls) add(ctx *simulator.Context, method string) {
	// The sandbox's own in-process client (simulator.Service.RoundTrip, used
	// for guest-initiated power-offs) is no round trip: its calls carry the
	// simulator's internal session, which has no user agent. Every HTTP
	// session has one (govmomi always sends it); calls before a login carry
	// no session at all.
	if ctx.Session != nil && ctx.Session.UserAgent == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
		c.byAgent = map[string]map[string]int64{}
		c.byOperation = map[string]map[string]map[string]int64{}
	}
	c.n[method]++
	agent := ""
	if ctx.Session != nil {
		agent = ctx.Session.UserAgent
	}
	if c.byAgent[agent] == nil {
		c.byAgent[agent] = map[string]int64{}
	}
	c.byAgent[agent][method]++
	if id := ctx.Header.ID; id != "" {
		if c.byOperation[agent] == nil {
			c.byOperation[agent] = map[string]map[string]int64{}
		}
		if c.byOperation[agent][id] == nil {
			c.byOperation[agent][id] = map[string]int64{}
		}
		c.byOperation[agent][id][method]++
	}
}

// CallsByOperation returns CallsBy(userAgent) by the calls' SOAP
// operationID (calls without one are left out).
func (s *Server) CallsByOperation(userAgent string) map[string]map[string]int64 {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	out := make(map[string]map[string]int64, len(s.calls.byOperation[userAgent]))
	for id, methods := range s.calls.byOperation[userAgent] {
		out[id] = maps.Clone(methods)
	}
	return out
}

// CallsBy returns Calls of the sessions whose user agent is userAgent; ""
// counts the calls made before a login (RetrieveServiceContent, Login).
func (s *Server) CallsBy(userAgent string) map[string]int64 {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return maps.Clone(s.calls.byAgent[userAgent])
}

// Calls returns how many SOAP requests clients have sent over HTTP to the
// vim25 endpoint (/sdk) since Start, by method name ("RetrievePropertiesEx",
// "CloneVM_Task", ...), including requests that failed. Take it before and
// after an operation and subtract (CallsSince) to count its round trips.
func (s *Server) Calls() map[string]int64 {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return maps.Clone(s.calls.n)
}

// CallsSince returns the requests sent since before (an earlier Calls), by
// method, and their total.
func (s *Server) CallsSince(before map[string]int64) (map[string]int64, int64) {
	diff := map[string]int64{}
	var total int64
	for m, n := range s.Calls() {
		if d := n - before[m]; d > 0 {
			diff[m] = d
			total += d
		}
	}
	return diff, total
}
