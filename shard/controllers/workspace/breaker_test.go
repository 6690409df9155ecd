package workspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

// clock is a fake clock for breakers.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

var errDialRefused = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}

func TestBreaker(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	b := newBreaker(time.Second, 8*time.Second, c.now)
	ctx := t.Context()
	calls := 0
	call := func(err error) error {
		return b.do(ctx, func() error { calls++; return err })
	}
	// failsFast asserts that a call is refused without running.
	failsFast := func(what string) {
		t.Helper()
		before := calls
		if err := call(nil); !errors.Is(err, errShardUnreachable) || calls != before {
			t.Fatalf("%s: call returned %v and ran %d times, want it refused", what, err, calls-before)
		}
	}

	// Closed: calls go through, answers (errors included) keep it closed.
	if err := call(nil); err != nil || calls != 1 {
		t.Fatalf("closed breaker: %v, %d calls", err, calls)
	}
	if err := call(apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), "cluster")); !apierrors.IsNotFound(err) || b.open() {
		t.Fatalf("an API error opened the breaker: %v", err)
	}

	// Unreachable: open for the initial cool-down.
	if err := call(errDialRefused); !errors.Is(err, errDialRefused) || !b.open() {
		t.Fatalf("a connection error did not open the breaker: %v", err)
	}
	failsFast("just opened")
	// A call that was in flight when it opened fails too: it does not grow
	// the cool-down.
	b.record(ctx, false, errDialRefused)
	c.advance(time.Second - time.Millisecond)
	failsFast("before the cool-down is over")

	// Cool-down over: one probe at a time.
	c.advance(time.Millisecond)
	err := b.do(ctx, func() error {
		calls++
		failsFast("while a probe is in flight")
		return errDialRefused
	})
	if !errors.Is(err, errDialRefused) {
		t.Fatalf("probe: %v", err)
	}
	// The probe failed: twice as long.
	c.advance(time.Second)
	failsFast("a second after the failed probe")
	c.advance(time.Second)
	if err := call(errDialRefused); !errors.Is(err, errDialRefused) {
		t.Fatalf("second probe refused: %v", err)
	}
	// Growing up to max.
	for range 5 {
		c.advance(time.Hour)
		_ = call(errDialRefused)
	}
	c.advance(8*time.Second - time.Millisecond)
	failsFast("before max")
	c.advance(time.Millisecond)

	// A probe its caller cancels teaches nothing: the next call probes.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.do(cancelled, func() error { calls++; return context.Canceled }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled probe: %v", err)
	}
	// An answer closes it.
	if err := call(nil); err != nil || b.open() {
		t.Fatalf("an answer did not close the breaker: %v", err)
	}
	if err := call(nil); err != nil {
		t.Fatalf("closed again: %v", err)
	}
	// And the next failure starts from the initial cool-down.
	_ = call(errDialRefused)
	c.advance(time.Second)
	if err := call(nil); err != nil {
		t.Fatalf("after the initial cool-down: %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"dial error", errDialRefused, true},
		{"request timeout", &url.Error{Op: "Get", URL: "https://s1", Err: context.DeadlineExceeded}, true},
		{"wrapped deadline", fmt.Errorf("waiting: %w", context.DeadlineExceeded), true},
		{"not found", apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), "cluster"), false},
		{"unavailable answer", apierrors.NewGenericServerResponse(http.StatusServiceUnavailable, "get", corev1alpha1.Resource("logicalclusters"), "cluster", "", 0, true), false},
		{"decoding", errors.New("cannot decode response"), false},
	} {
		if got := unreachable(tc.err); got != tc.want {
			t.Errorf("%s: unreachable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
