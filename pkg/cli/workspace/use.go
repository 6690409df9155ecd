package workspace

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// homeWorkspaceName is the name under which the root logical cluster serves
// the caller's home workspace.
const homeWorkspaceName = "~"

// useOptions are the options of "kubectl ws [arg]" and "kubectl ws use arg".
type useOptions struct {
	short   bool
	timeout time.Duration
	// homeDir returns the user's home directory, to recognise an unquoted ~
	// the shell expanded.
	homeDir func() (string, error)
}

// use switches to (or, for ".", prints) the workspace arg names.
func (o *useOptions) run(ctx context.Context, s *session, arg string) error {
	home, _ := o.homeDir()
	t, err := parseTarget(arg, home)
	if err != nil {
		return err
	}

	switch t.kind {
	case targetCurrent:
		return printCurrentWorkspace(s, o.short)
	case targetPrevious:
		server, err := s.kc.swap()
		if err != nil {
			return err
		}
		return printCurrent(s.out, server, o.short)
	case targetHome:
		p, err := s.homePath(ctx, o.timeout)
		if err != nil {
			return err
		}
		return s.switchTo(p, o.short)
	}

	p, err := t.resolve(s.kc.server.path, s.kc.cluster.Server)
	if err != nil {
		return err
	}
	if err := s.checkEnterable(ctx, p); err != nil {
		return err
	}
	return s.switchTo(p, o.short)
}

// printCurrentWorkspace prints the current workspace.
func printCurrentWorkspace(s *session, short bool) error {
	if _, err := s.currentPath(); err != nil {
		return err
	}
	return printCurrent(s.out, s.kc.cluster.Server, short)
}

// switchTo makes the workspace at p current and prints it.
func (s *session) switchTo(p logicalcluster.Path, short bool) error {
	server := workspaceURL(s.kc.server.base, p)
	if err := s.kc.switchTo(server); err != nil {
		return err
	}
	return printCurrent(s.out, server, short)
}

// checkEnterable checks that the workspace at p exists and is Ready, by
// getting its Workspace object in the parent. When the parent does not let
// the caller read it, the workspace itself is asked through discovery.
// Top-level logical clusters such as root have no Workspace object and are
// not checked.
func (s *session) checkEnterable(ctx context.Context, p logicalcluster.Path) error {
	parent, ok := p.Parent()
	if !ok {
		return nil
	}
	c, err := s.client(parent)
	if err != nil {
		return err
	}
	ws, err := c.Workspaces().Get(ctx, p.Base(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("workspace %q not found in %q", p.Base(), parent.String())
	case apierrors.IsForbidden(err):
		return s.checkReachable(p)
	case err != nil:
		return fmt.Errorf("getting workspace %q in %q: %w", p.Base(), parent.String(), err)
	case !isReady(ws):
		return fmt.Errorf("workspace %q is not ready (phase %s)", p.Base(), phaseOf(ws))
	}
	return nil
}

// checkReachable checks that the caller can use the logical cluster at p,
// by asking for its API groups.
func (s *session) checkReachable(p logicalcluster.Path) error {
	dc, err := discovery.NewDiscoveryClientForConfig(s.restConfig(p))
	if err != nil {
		return fmt.Errorf("creating discovery client for %q: %w", p.String(), err)
	}
	_, err = dc.ServerGroups()
	switch {
	case err == nil:
		return nil
	case apierrors.IsForbidden(err):
		return fmt.Errorf("access to workspace %q denied", p.String())
	case apierrors.IsNotFound(err):
		return fmt.Errorf("workspace %q not found", p.String())
	default:
		return fmt.Errorf("checking access to workspace %q: %w", p.String(), err)
	}
}

// homePath returns the path of the caller's home workspace, waiting up to
// timeout for it to become ready (it is created on first access).
func (s *session) homePath(ctx context.Context, timeout time.Duration) (logicalcluster.Path, error) {
	c, err := s.client(rootPath)
	if err != nil {
		return logicalcluster.Path{}, err
	}
	get := func(ctx context.Context) (*tenancyv1alpha1.Workspace, error) {
		return c.Workspaces().Get(ctx, homeWorkspaceName, metav1.GetOptions{})
	}
	ws, err := waitForReady(ctx, timeout, "home workspace", get)
	if err != nil {
		return logicalcluster.Path{}, fmt.Errorf("getting home workspace: %w", err)
	}
	u, err := parseServerURL(ws.Spec.URL)
	if err != nil {
		return logicalcluster.Path{}, fmt.Errorf("home workspace: %w", err)
	}
	if !u.isWorkspace() {
		return logicalcluster.Path{}, fmt.Errorf("home workspace URL %q is not a workspace URL", ws.Spec.URL)
	}
	return u.path, nil
}
