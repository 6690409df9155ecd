package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// session is one run of a command: the loaded kubeconfig, the output
// streams and the clients of the logical clusters it talks to.
type session struct {
	kc      *kubeconfig
	out     io.Writer
	clients map[string]*kcp.Clientset
}

func newSession(flags *kubeconfigFlags, out io.Writer) (*session, error) {
	kc, err := flags.load()
	if err != nil {
		return nil, err
	}
	return &session{kc: kc, out: out, clients: map[string]*kcp.Clientset{}}, nil
}

// currentPath returns the path of the current workspace, or an error when
// the current URL does not address one.
func (s *session) currentPath() (logicalcluster.Path, error) {
	if !s.kc.server.isWorkspace() {
		return logicalcluster.Path{}, notWorkspaceURLError(s.kc.cluster.Server)
	}
	return s.kc.server.path, nil
}

// restConfig returns the client configuration of the logical cluster at p.
func (s *session) restConfig(p logicalcluster.Path) *rest.Config {
	return s.kc.restConfig(p)
}

// client returns the kcp client of the logical cluster at p.
func (s *session) client(p logicalcluster.Path) (*kcp.Clientset, error) {
	if c, ok := s.clients[p.String()]; ok {
		return c, nil
	}
	c, err := kcp.NewForConfig(s.restConfig(p))
	if err != nil {
		return nil, fmt.Errorf("creating client for %q: %w", p.String(), err)
	}
	s.clients[p.String()] = c
	return c, nil
}

// printCurrent prints the line every successful switch ends with.
func printCurrent(out io.Writer, server string, short bool) error {
	u, err := parseServerURL(server)
	if err != nil {
		return err
	}
	switch {
	case !u.isWorkspace():
		if short {
			_, err = fmt.Fprintln(out, server)
		} else {
			_, err = fmt.Fprintf(out, "Current workspace is the URL %q.\n", server)
		}
	case short:
		_, err = fmt.Fprintln(out, u.path.String())
	default:
		_, err = fmt.Fprintf(out, "Current workspace is %q.\n", u.path.String())
	}
	return err
}

// isReady tells whether a workspace can be entered.
func isReady(ws *tenancyv1alpha1.Workspace) bool {
	return ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady
}

// phaseOf returns the phase of a workspace for messages.
func phaseOf(ws *tenancyv1alpha1.Workspace) string {
	if ws == nil || ws.Status.Phase == "" {
		return "unknown"
	}
	return string(ws.Status.Phase)
}

// typeOf returns the type of a workspace for messages: the type the server
// stored, else the requested one.
func typeOf(ws *tenancyv1alpha1.Workspace, requested *tenancyv1alpha1.WorkspaceTypeReference) string {
	switch {
	case ws != nil && ws.Spec.Type != nil && ws.Spec.Type.Name != "":
		return ws.Spec.Type.String()
	case requested != nil:
		return requested.String()
	default:
		return "unknown"
	}
}

// Polling intervals while waiting for a workspace to become ready.
const (
	firstPollInterval = 100 * time.Millisecond
	maxPollInterval   = time.Second
)

// isRetryable tells whether an error is a transient condition of the server
// that a later attempt may not see.
func isRetryable(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

// waitForReady calls get until it returns a Ready workspace, a
// non-retryable error, or timeout passes. It honours Retry-After on
// throttling and unavailability errors. On timeout it returns the last
// workspace seen (possibly nil) and an error describing what it waited for.
// A timeout of zero or less means a single attempt.
func waitForReady(ctx context.Context, timeout time.Duration, what string, get func(context.Context) (*tenancyv1alpha1.Workspace, error)) (*tenancyv1alpha1.Workspace, error) {
	if timeout <= 0 {
		ws, err := get(ctx)
		if err != nil {
			return nil, err
		}
		if !isReady(ws) {
			return ws, fmt.Errorf("%s is not ready (phase %s)", what, phaseOf(ws))
		}
		return ws, nil
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	interval := firstPollInterval
	var last *tenancyv1alpha1.Workspace
	var lastErr error
	for {
		ws, err := get(ctx)
		delay := interval
		switch {
		case err == nil && isReady(ws):
			return ws, nil
		case err == nil:
			last, lastErr = ws, nil
		case ctx.Err() != nil:
			// The request was cut by the deadline; report the timeout below.
		case isRetryable(err):
			lastErr = err
			if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
				delay = time.Duration(seconds) * time.Second
			}
		default:
			return ws, err
		}

		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return last, ctx.Err()
			}
			if lastErr != nil {
				return last, fmt.Errorf("%s did not become ready within %s: %w", what, timeout, lastErr)
			}
			return last, fmt.Errorf("%s did not become ready within %s (phase %s)", what, timeout, phaseOf(last))
		case <-time.After(delay):
		}
		interval = min(interval*3/2, maxPollInterval)
	}
}
