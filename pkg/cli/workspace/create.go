package workspace

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// createOptions are the options of "kubectl ws create".
type createOptions struct {
	typ              string
	enter            bool
	ignoreExisting   bool
	locationSelector string
	timeout          time.Duration
}

// typeNameRE is the pattern of a WorkspaceType name.
var typeNameRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// parseTypeFlag parses --type [path:]name. Everything before the last ':'
// is the path of the logical cluster of the type. An empty flag means the
// server's default.
func parseTypeFlag(s string) (*tenancyv1alpha1.WorkspaceTypeReference, error) {
	if s == "" {
		return nil, nil
	}
	ref := &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(s)}
	if i := strings.LastIndex(s, logicalcluster.Separator); i >= 0 {
		ref.Path, ref.Name = s[:i], tenancyv1alpha1.WorkspaceTypeName(s[i+1:])
		if !logicalcluster.IsValidPath(ref.Path) {
			return nil, fmt.Errorf("invalid --type %q: %q is not a valid path", s, ref.Path)
		}
	}
	if !typeNameRE.MatchString(string(ref.Name)) {
		return nil, fmt.Errorf("invalid --type %q: %q is not a valid workspace type name", s, ref.Name)
	}
	return ref, nil
}

// sameType tells whether an existing workspace's type matches the requested
// one. A request without a path matches a type of that name at any path.
func sameType(existing, requested *tenancyv1alpha1.WorkspaceTypeReference) bool {
	if requested == nil {
		return true
	}
	if existing == nil || existing.Name != requested.Name {
		return false
	}
	return requested.Path == "" || existing.Path == requested.Path
}

// run creates the workspace name in the current workspace.
func (o *createOptions) run(ctx context.Context, s *session, name string) error {
	current, err := s.currentPath()
	if err != nil {
		return err
	}
	if name == "" || strings.Contains(name, logicalcluster.Separator) {
		return fmt.Errorf("invalid workspace name %q: create a workspace from inside its parent, by name", name)
	}
	typ, err := parseTypeFlag(o.typ)
	if err != nil {
		return err
	}
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Type: typ},
	}
	if o.locationSelector != "" {
		sel, err := metav1.ParseToLabelSelector(o.locationSelector)
		if err != nil {
			return fmt.Errorf("invalid --location-selector %q: %w", o.locationSelector, err)
		}
		ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: sel}
	}

	c, err := s.client(current)
	if err != nil {
		return err
	}
	existed := false
	created, err := c.Workspaces().Create(ctx, ws, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) && o.ignoreExisting {
		existed = true
		created, err = c.Workspaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("getting existing workspace %q in %q: %w", name, current.String(), err)
		}
		if !sameType(created.Spec.Type, typ) {
			return fmt.Errorf("workspace %q already exists in %q with type %s, not %s", name, current.String(), typeOf(created, nil), typ.String())
		}
	} else if err != nil {
		return fmt.Errorf("creating workspace %q in %q: %w", name, current.String(), err)
	}

	ref := fmt.Sprintf("Workspace %q (type %s)", name, typeOf(created, typ))
	wait := o.timeout > 0 && !isReady(created)
	verb := "created"
	if existed {
		verb = "already exists"
	}
	if wait {
		fmt.Fprintf(s.out, "%s %s. Waiting for it to be ready...\n", ref, verb)
	} else {
		fmt.Fprintf(s.out, "%s %s.\n", ref, verb)
	}

	if o.timeout > 0 {
		if wait {
			get := func(ctx context.Context) (*tenancyv1alpha1.Workspace, error) {
				return c.Workspaces().Get(ctx, name, metav1.GetOptions{})
			}
			ready, err := waitForReady(ctx, o.timeout, fmt.Sprintf("workspace %q", name), get)
			if err != nil {
				return err
			}
			ref = fmt.Sprintf("Workspace %q (type %s)", name, typeOf(ready, typ))
		}
		fmt.Fprintf(s.out, "%s is ready to use.\n", ref)
	}

	if o.enter {
		return s.switchTo(current.Join(name), false)
	}
	return nil
}
