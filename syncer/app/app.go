// Package app holds the tessera-syncer command line.
package app

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
	"github.com/tessera-dev/tessera/syncer"
	"github.com/tessera-dev/tessera/syncer/options"
)

// NewCommand returns the tessera-syncer command.
func NewCommand(ctx context.Context) *cobra.Command {
	cmd := servercmd.New("tessera-syncer", "Sync the workloads scheduled to a SyncTarget onto a physical cluster", options.NewOptions(), func(o options.Completed) error {
		s, err := syncer.New(ctx, o)
		if err != nil {
			return err
		}
		return s.Run(ctx)
	})
	cmd.Long = `tessera-syncer runs next to (usually inside) a physical cluster and syncs
onto it the objects that workspaces schedule to one SyncTarget, as kcp's
syncer does:

  - it reads them through the syncer virtual workspace of every shard
    (the SyncTarget's status.virtualWorkspaces), as the SyncTarget's
    service account (--from-kubeconfig, written by kubectl kcp workload sync);
  - it applies them into a namespace of the physical cluster named from
    the hash of the SyncTarget, workspace and namespace, labelled
    internal.workload.kcp.io/cluster=<SyncTarget key>;
  - it writes their status back, holds them upstream with the finalizer
    workload.kcp.io/syncer-<key> while a downstream copy exists, and deletes
    the copy when they are deleted or leave the SyncTarget;
  - it heartbeats the SyncTarget and reports which of its resources the
    physical cluster serves (status.syncedResources Accepted/Incompatible).`
	return cmd
}
