package workload

import (
	"context"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-dev/tessera/pkg/cli/plugin"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
)

// cordonOptions are the options of "kubectl kcp workload cordon" and
// "uncordon".
type cordonOptions struct {
	client workspace.ClientFlags
	// cordon tells cordon (true) from uncordon.
	cordon bool
}

// cordonPatch is the merge patch that cordons or uncordons a SyncTarget;
// uncordoning also ends an eviction, as kcp's does.
func cordonPatch(cordon bool) []byte {
	if cordon {
		return []byte(`{"spec":{"unschedulable":true}}`)
	}
	return []byte(`{"spec":{"unschedulable":false,"evictAfter":null}}`)
}

// run marks the SyncTarget unschedulable or schedulable, and says so.
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
	done := "uncordoned"
	if o.cordon {
		done = "cordoned"
	}
	if st.Spec.Unschedulable == o.cordon {
		_, err = fmt.Fprintln(out, name, "already", done)
		return err
	}
	if _, err := client.Patch(ctx, name, types.MergePatchType, cordonPatch(o.cordon), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("failed to update SyncTarget %s: %w", name, err)
	}
	_, err = fmt.Fprintln(out, name, done)
	return err
}
