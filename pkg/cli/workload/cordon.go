package workload

import (
	"context"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-dev/tessera/pkg/cli/plugin"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
)

// The actions of cordonOptions.
const (
	// cordon keeps new workloads off a SyncTarget.
	cordon = "cordon"
	// uncordon lets them on again and ends a drain.
	uncordon = "uncordon"
	// drain also moves the workloads it has elsewhere, now.
	drain = "drain"
)

// cordonOptions are the options of "kubectl kcp workload cordon",
// "uncordon" and "drain".
type cordonOptions struct {
	client workspace.ClientFlags
	// action is cordon, uncordon or drain.
	action string
	// now is the time a drain starts; time.Now when nil.
	now func() time.Time
}

// cordonPatch is the merge patch of an action at time now: a drain is a
// cordon with evictAfter now, which makes the scheduler move the
// SyncTarget's namespaces elsewhere; uncordoning also ends an eviction, as
// kcp's does.
func cordonPatch(action string, now time.Time) []byte {
	switch action {
	case cordon:
		return []byte(`{"spec":{"unschedulable":true}}`)
	case drain:
		return []byte(fmt.Sprintf(`{"spec":{"unschedulable":true,"evictAfter":%q}}`, now.UTC().Format(time.RFC3339)))
	}
	return []byte(`{"spec":{"unschedulable":false,"evictAfter":null}}`)
}

// run applies the action to the SyncTarget, and says so.
func (o *cordonOptions) run(ctx context.Context, out io.Writer, name string) error {
	c, err := plugin.Connect(&o.client)
	if err != nil {
		return err
	}
	client := c.Dynamic.Resource(syncTargetsGVR)
	u, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("failed to get SyncTarget %s: %w", name, err)
	}
	st, err := fromUnstructured(u)
	if err != nil {
		return err
	}
	var done string
	var already bool
	switch o.action {
	case cordon:
		done, already = "cordoned", st.Spec.Unschedulable
	case drain:
		done, already = "draining", st.Spec.Unschedulable && st.Spec.EvictAfter != nil
	default:
		done, already = "uncordoned", !st.Spec.Unschedulable && st.Spec.EvictAfter == nil
	}
	if already {
		_, err = fmt.Fprintln(out, name, "already", done)
		return err
	}
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	if _, err := client.Patch(ctx, name, types.MergePatchType, cordonPatch(o.action, now()), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("failed to update SyncTarget %s: %w", name, err)
	}
	_, err = fmt.Fprintln(out, name, done)
	return err
}
