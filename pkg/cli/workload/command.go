// Package workload is the kubectl kcp workload command, as kcp's TMC
// plugin: `workload sync` makes a SyncTarget in the current workspace,
// gives its syncer a service account with access to it, and writes the
// manifest that runs the syncer on the physical cluster; `workload
// cordon` and `uncordon` keep new workloads off a SyncTarget or let them
// on again; `workload drain` cordons it and moves its workloads to the
// other SyncTargets of their Locations now (spec.evictAfter).
package workload

import (
	"time"

	"github.com/spf13/cobra"
)

// pollInterval is how often `workload sync` reads the token Secret while
// it waits.
const pollInterval = 100 * time.Millisecond

// NewCommand returns the workload command with its sync, cordon,
// uncordon and drain subcommands.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Manage SyncTargets and their syncers",
		Args:  cobra.NoArgs,
		// Errors are printed once, by the caller (workspace.Run).
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newSyncCommand(newSyncOptions(pollInterval)), newCordonCommand(cordon), newCordonCommand(uncordon), newCordonCommand(drain))
	return cmd
}

func newSyncCommand(o *syncOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync <sync-target-name> --syncer-image <image> -o <output-file>",
		Short: "Create a SyncTarget and the manifest of its syncer",
		Long: `Create or update the SyncTarget <sync-target-name> in the current workspace,
a service account for its syncer with the right to sync it (in --kcp-namespace)
and its token, then write the manifest that runs the syncer on the physical
cluster: a namespace, the syncer's service account and RBAC, a Secret with a
kubeconfig for the current workspace and the service account's token, and
the syncer's Deployment. Running it again updates what it made.`,
		Example: `  # Sync the physical cluster "kind" with the workspace, with the compute
  # service's APIExport root:compute:kubernetes.
  kubectl kcp workload sync kind --syncer-image ghcr.io/tessera-dev/tessera-syncer:latest -o syncer-kind.yaml
  KUBECONFIG=<pcluster-config> kubectl apply -f syncer-kind.yaml`,
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
	}
	o.client.AddFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.StringSliceVar(&o.resources, "resources", o.resources, "Resources to synchronize with kcp, each as <resource>.<group> (the resource alone for the core group), e.g. routes.route.openshift.io.")
	fs.StringSliceVar(&o.apiExports, "apiexports", o.apiExports, "APIExports the SyncTarget supports, each as <absolute workspace path>:<apiexport name>, e.g. root:compute:kubernetes.")
	fs.StringVar(&o.image, "syncer-image", o.image, "The syncer image to use in the syncer's Deployment.")
	fs.IntVar(&o.replicas, "replicas", o.replicas, "Number of replicas of the syncer's Deployment (0 or 1).")
	fs.StringVar(&o.kcpNamespace, "kcp-namespace", o.kcpNamespace, "The namespace of the workspace to create the syncer's service account in.")
	fs.StringVarP(&o.output, "output-file", "o", o.output, "The manifest file to write, to apply to the physical cluster; - for stdout.")
	fs.StringVarP(&o.namespace, "namespace", "n", o.namespace, "The syncer's namespace on the physical cluster (default: kcp-syncer-<sync-target-name>-<hash>).")
	fs.Float32Var(&o.qps, "qps", o.qps, "QPS of the syncer when talking to API servers.")
	fs.IntVar(&o.burst, "burst", o.burst, "Burst of the syncer when talking to API servers.")
	fs.DurationVar(&o.cleanDelay, "downstream-namespace-clean-delay", o.cleanDelay, "How long the syncer waits before it deletes a downstream namespace.")
	fs.StringSliceVar(&o.labels, "labels", o.labels, "Labels of the SyncTarget, each as key=value.")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the token of the syncer's service account.")
	return cmd
}

func newCordonCommand(action string) *cobra.Command {
	o := &cordonOptions{action: action}
	short := map[string]string{
		cordon:   "Mark a SyncTarget as unschedulable",
		uncordon: "Mark a SyncTarget as schedulable again, ending a drain",
		drain:    "Start draining a SyncTarget for maintenance: unschedulable, and its workloads move to other SyncTargets",
	}[action]
	cmd := &cobra.Command{
		Use:           action + " <sync-target-name>",
		Short:         short,
		Args:          cobra.ExactArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), args[0])
		},
	}
	o.client.AddFlags(cmd.Flags())
	return cmd
}
