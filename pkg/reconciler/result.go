package reconciler

import (
	"context"
	"errors"
	"time"
)

// Reconciler brings the object behind a key to its desired state. It is
// called with a context whose logger carries the controller, the cluster
// and the object, and never concurrently for the same key.
type Reconciler interface {
	// Reconcile returns an error to be retried with rate-limited backoff,
	// a TerminalError to give up on the key until its next event, or a
	// Result to requeue it after a delay.
	Reconcile(ctx context.Context, key Key) (Result, error)
}

// Func adapts a function to Reconciler.
type Func func(ctx context.Context, key Key) (Result, error)

// Reconcile calls f.
func (f Func) Reconcile(ctx context.Context, key Key) (Result, error) { return f(ctx, key) }

// Result is the outcome of a successful reconcile.
type Result struct {
	// RequeueAfter, if positive, reconciles the key again after this
	// delay (unless an event enqueues it earlier). It is ignored when
	// Reconcile returns an error.
	RequeueAfter time.Duration
}

// terminalError marks an error that retrying cannot fix.
type terminalError struct {
	err error
}

func (e *terminalError) Error() string { return "terminal error: " + e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// TerminalError wraps err so that the controller logs it and does not retry
// the key; a later event for the object enqueues it again. It returns nil for
// a nil err.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal tells whether err, or an error it wraps, is a TerminalError.
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}
