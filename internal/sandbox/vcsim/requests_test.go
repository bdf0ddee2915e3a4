package vcsim

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/methods"
)

// TestOnRequestHoldsTheCall holds a request in its hook: the client waits
// for the reply until the hook returns, and the hook's context ends when
// the client gives up on the reply. The method is named from the SOAP body.
func TestOnRequestHoldsTheCall(t *testing.T) {
	s, ca := startServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := connect(ctx, t, s, ca, url.UserPassword(s.User, s.Password))
	if err != nil {
		t.Fatal(err)
	}

	type held struct {
		ctx     context.Context
		release chan struct{}
	}
	arrived := make(chan held, 1)
	remove := s.OnRequest(func(ctx context.Context, method string) {
		if method != "CurrentTime" {
			return
		}
		h := held{ctx: ctx, release: make(chan struct{})}
		arrived <- h
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	})
	defer remove()

	// Held, then released: the reply comes once the hook returns.
	replied := make(chan error, 1)
	go func() { _, err := methods.GetCurrentTime(ctx, c); replied <- err }()
	h := <-arrived
	select {
	case err := <-replied:
		t.Fatalf("the call was answered while its request was held: %v", err)
	default:
	}
	close(h.release)
	if err := <-replied; err != nil {
		t.Fatalf("the released call: %v", err)
	}

	// Abandoned by its client: the hook's context ends.
	callCtx, cancelCall := context.WithCancel(ctx)
	go func() { _, err := methods.GetCurrentTime(callCtx, c); replied <- err }()
	h = <-arrived
	cancelCall()
	select {
	case <-h.ctx.Done():
	case <-ctx.Done():
		t.Fatal("the hook's context did not end when the client gave up on the reply")
	}
	if err := <-replied; !errors.Is(err, context.Canceled) {
		t.Errorf("the abandoned call ended with %v, want context.Canceled", err)
	}

	// Removed: calls pass straight through.
	remove()
	if _, err := methods.GetCurrentTime(ctx, c); err != nil {
		t.Fatal(err)
	}
}

func TestSOAPMethod(t *testing.T) {
	for body, want := range map[string]string{
		`<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header><operationID>x</operationID></soapenv:Header><soapenv:Body><CloneVM_Task xmlns="urn:vim25"><_this type="VirtualMachine">vm-1</_this></CloneVM_Task></soapenv:Body></soapenv:Envelope>`: "CloneVM_Task",
		`<Envelope><Body><CurrentTime/></Body></Envelope>`: "CurrentTime",
		`<Envelope><Header/></Envelope>`:                   "",
		`not xml`:                                          "",
	} {
		if got := soapMethod([]byte(body)); got != want {
			t.Errorf("soapMethod(%.40q) = %q, want %q", body, got, want)
		}
	}
}
