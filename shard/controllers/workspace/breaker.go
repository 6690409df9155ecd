package workspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Bounds of the circuit breaker of a shard.
const (
	// dialTimeout bounds opening a connection to a shard, well below
	// remoteTimeout: a shard that does not accept connections is known
	// to be down after this long.
	dialTimeout = 5 * time.Second
	// initialCoolDown is how long calls to a shard fail at once after a
	// call could not reach it; every failed probe doubles it, up to
	// maxCoolDown.
	initialCoolDown = 2 * time.Second
	maxCoolDown     = time.Minute
)

// errShardUnreachable is returned, without a request, for calls to a
// shard whose breaker is open.
var errShardUnreachable = errors.New("shard is unreachable")

// breaker is the circuit breaker of one shard. When a call cannot reach
// the shard (a connection error or a timeout, as opposed to any answer of
// the shard, errors included), calls to that shard fail at once with
// errShardUnreachable for a cool-down. When it is over, one call at a time
// goes through as a probe while the others still fail at once: an answer
// closes the breaker, another failure opens it again for twice as long, up
// to max. So an unreachable shard holds at most one worker at a time for
// the remote timeout, instead of every worker that has a Workspace there.
//
// Its state is a few words per shard; nothing runs in the background.
type breaker struct {
	initial, max time.Duration
	now          func() time.Time

	mu sync.Mutex
	// coolDown is the current cool-down; zero means closed.
	coolDown time.Duration
	// openUntil is when the next probe may go through.
	openUntil time.Time
	// probing is set while a probe is in flight.
	probing bool
}

func newBreaker(initial, max time.Duration, now func() time.Time) *breaker {
	return &breaker{initial: initial, max: max, now: now}
}

// do calls fn unless the breaker is open, and learns from its error
// whether the shard can be reached. ctx is the caller's context: a call
// it cancelled says nothing about the shard.
func (b *breaker) do(ctx context.Context, fn func() error) error {
	probe, err := b.acquire()
	if err != nil {
		return err
	}
	err = fn()
	b.record(ctx, probe, err)
	return err
}

// acquire tells whether a call may go through now, and whether it is the
// probe of an open breaker.
func (b *breaker) acquire() (probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.coolDown == 0 {
		return false, nil
	}
	if b.probing {
		return false, fmt.Errorf("%w: a probe is in flight", errShardUnreachable)
	}
	if now := b.now(); now.Before(b.openUntil) {
		return false, fmt.Errorf("%w: next attempt in %v", errShardUnreachable, b.openUntil.Sub(now).Round(time.Millisecond))
	}
	b.probing = true
	return true, nil
}

// record updates the breaker with the outcome err of a call.
func (b *breaker) record(ctx context.Context, probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch {
	case ctx.Err() != nil:
		// The caller gave up: nothing learnt.
	case unreachable(err):
		switch {
		case b.coolDown == 0:
			b.coolDown = b.initial
		case probe:
			b.coolDown = min(2*b.coolDown, b.max)
		}
		// Calls that were in flight when the breaker opened fail as
		// well; they extend the cool-down but do not grow it.
		if until := b.now().Add(b.coolDown); until.After(b.openUntil) {
			b.openUntil = until
		}
	default:
		// The shard answered.
		b.coolDown, b.openUntil = 0, time.Time{}
	}
}

// open tells whether calls fail at once, for tests.
func (b *breaker) open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.coolDown != 0
}

// unreachable tells whether err means that a request did not reach the
// shard or got no answer in time: a connection error or a timeout. Any
// API status, even a NotFound from a proxy, is an answer.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}
