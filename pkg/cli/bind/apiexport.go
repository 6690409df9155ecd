package bind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/cli/plugin"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
	"github.com/tessera-dev/tessera/pkg/client/kcp"
)

// apiExportOptions are the options of "kubectl kcp bind apiexport".
type apiExportOptions struct {
	client workspace.ClientFlags
	// name of the APIBinding; empty means the name of the APIExport.
	name string
	// timeout is how long to wait for the binding to be bound.
	timeout time.Duration
	// interval is how often the binding is read while waiting.
	interval time.Duration
	// accept and reject are the --accept-permission-claim and
	// --reject-permission-claim values, <resource>.<group>.
	accept, reject       []string
	acceptAll, rejectAll bool
}

// bindRequired is the error of a missing APIExport argument.
const bindRequired = "the APIExport to bind is required as an argument; " + plugin.ExportRefFormat

// parseClaim parses a permission claim flag value, <resource>.<group>,
// where the group "core" stands for the core group ("").
func parseClaim(s string) (apisv1alpha1.GroupResource, error) {
	resource, group, ok := strings.Cut(s, ".")
	if !ok || resource == "" {
		return apisv1alpha1.GroupResource{}, fmt.Errorf("invalid permission claim %q: the format is <resource>.<group>, with core for the core group (e.g. configmaps.core)", s)
	}
	if group == "core" {
		group = ""
	}
	return apisv1alpha1.GroupResource{Group: group, Resource: resource}, nil
}

// flagClaims returns the permission claims of the --accept-permission-claim
// and --reject-permission-claim flags, accepted ones first, each claim once.
// A claim both accepted and rejected is an error.
func flagClaims(accept, reject []string) ([]apisv1alpha1.AcceptablePermissionClaim, error) {
	var (
		claims []apisv1alpha1.AcceptablePermissionClaim
		errs   []error
		seen   = map[apisv1alpha1.GroupResource]apisv1alpha1.AcceptablePermissionClaimState{}
	)
	add := func(values []string, state apisv1alpha1.AcceptablePermissionClaimState) {
		for _, v := range values {
			gr, err := parseClaim(v)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev, ok := seen[gr]; ok {
				if prev != state {
					errs = append(errs, fmt.Errorf("permission claim %q is both accepted and rejected", v))
				}
				continue
			}
			seen[gr] = state
			claims = append(claims, apisv1alpha1.AcceptablePermissionClaim{
				PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: gr, All: true},
				State:           state,
			})
		}
	}
	add(accept, apisv1alpha1.ClaimAccepted)
	add(reject, apisv1alpha1.ClaimRejected)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return claims, nil
}

// validateAll checks that --accept-all-permission-claims and
// --reject-all-permission-claims are used alone.
func (o *apiExportOptions) validateAll() error {
	switch {
	case o.acceptAll && o.rejectAll:
		return errors.New("--accept-all-permission-claims and --reject-all-permission-claims cannot be used together")
	case (o.acceptAll || o.rejectAll) && (len(o.accept) > 0 || len(o.reject) > 0):
		return errors.New("--accept-all-permission-claims and --reject-all-permission-claims cannot be used with --accept-permission-claim or --reject-permission-claim")
	}
	return nil
}

// run creates the APIBinding in the current workspace and waits until it
// is bound.
func (o *apiExportOptions) run(ctx context.Context, out io.Writer, arg string) error {
	if arg == "" {
		return errors.New(bindRequired)
	}
	ref, err := plugin.ParseExportRef(arg)
	if err != nil {
		return err
	}
	if err := o.validateAll(); err != nil {
		return err
	}
	claims, err := flagClaims(o.accept, o.reject)
	if err != nil {
		return err
	}

	clients, err := plugin.Connect(&o.client)
	if err != nil {
		return err
	}
	current, c := clients.Path, clients.KCP
	if o.acceptAll || o.rejectAll {
		if claims, err = o.exportClaims(ctx, clients.Connection, ref); err != nil {
			return err
		}
	}

	name := o.name
	if name == "" {
		name = ref.Name
	}
	binding := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1alpha1.APIBindingSpec{
			Reference: apisv1alpha1.BindingReference{
				Export: &apisv1alpha1.ExportBindingReference{Path: ref.Path.String(), Name: ref.Name},
			},
			PermissionClaims: claims,
		},
	}
	created, err := c.APIBindings().Create(ctx, binding, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("failed to create APIBinding in %q: %w", current.String(), err)
	}
	if _, err := fmt.Fprintf(out, "apibinding %s created. Waiting to successfully bind ...\n", created.Name); err != nil {
		return err
	}

	get := func(ctx context.Context) (*apisv1alpha1.APIBinding, error) {
		return c.APIBindings().Get(ctx, created.Name, metav1.GetOptions{})
	}
	if err := waitForBound(ctx, o.timeout, o.interval, created, get); err != nil {
		return fmt.Errorf("could not bind %s: %w", created.Name, err)
	}
	_, err = fmt.Fprintf(out, "%s created and bound.\n", created.Name)
	return err
}

// exportClaims reads the APIExport and answers all its permission claims
// as --accept-all-permission-claims or --reject-all-permission-claims say.
// The claims are copied whole, identity hash and selector included, so
// that they are the claims the APIExport makes.
func (o *apiExportOptions) exportClaims(ctx context.Context, conn *workspace.Connection, ref plugin.ExportRef) ([]apisv1alpha1.AcceptablePermissionClaim, error) {
	path := ref.Path
	if path.Empty() {
		path = conn.Current()
	}
	c, err := kcp.NewForConfig(conn.Config(path))
	if err != nil {
		return nil, fmt.Errorf("creating client for %q: %w", path.String(), err)
	}
	export, err := c.APIExports().Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to get APIExport %q in %q: %w", ref.Name, path.String(), err)
	}
	state := apisv1alpha1.ClaimAccepted
	if o.rejectAll {
		state = apisv1alpha1.ClaimRejected
	}
	claims := make([]apisv1alpha1.AcceptablePermissionClaim, 0, len(export.Spec.PermissionClaims))
	for _, pc := range export.Spec.PermissionClaims {
		claims = append(claims, apisv1alpha1.AcceptablePermissionClaim{PermissionClaim: *pc.DeepCopy(), State: state})
	}
	return claims, nil
}

// isBound tells whether a binding is bound, by its phase, as kcp's plugin
// does.
func isBound(b *apisv1alpha1.APIBinding) bool {
	return b.Status.Phase == apisv1alpha1.APIBindingPhaseBound
}

// waitForBound reads the binding with get every interval, starting from b,
// until it is bound, a read fails with a non-retryable error, or timeout
// passes. The timeout error tells the binding's last phase and conditions.
func waitForBound(ctx context.Context, timeout, interval time.Duration, b *apisv1alpha1.APIBinding, get func(context.Context) (*apisv1alpha1.APIBinding, error)) error {
	if isBound(b) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()

	var lastErr error
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			msg := fmt.Sprintf("not bound within %s: %s", timeout, describeStatus(b))
			if lastErr != nil {
				msg += "; last error: " + lastErr.Error()
			}
			return errors.New(msg)
		case <-tick.C:
		}
		next, err := get(ctx)
		switch {
		case err == nil:
			b, lastErr = next, nil
			if isBound(b) {
				return nil
			}
		case ctx.Err() != nil:
			// The read was cut by the deadline; report the timeout above.
		case plugin.IsRetryable(err):
			lastErr = err
		default:
			return err
		}
	}
}

// describeStatus tells the phase and the conditions of a binding, e.g.
// "phase Binding, conditions: APIExportValid=False (APIExportNotFound:
// ...); InitialBindingCompleted=False (WaitingForEstablished)".
func describeStatus(b *apisv1alpha1.APIBinding) string {
	phase := "no phase yet"
	if b.Status.Phase != "" {
		phase = "phase " + string(b.Status.Phase)
	}
	if len(b.Status.Conditions) == 0 {
		return phase + ", no conditions"
	}
	conds := make([]string, 0, len(b.Status.Conditions))
	for _, c := range b.Status.Conditions {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		switch {
		case c.Reason != "" && c.Message != "":
			s += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		case c.Reason != "":
			s += " (" + c.Reason + ")"
		case c.Message != "":
			s += " (" + c.Message + ")"
		}
		conds = append(conds, s)
	}
	return phase + ", conditions: " + strings.Join(conds, "; ")
}
