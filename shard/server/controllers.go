package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/controllers/admissionpolicystatus"
	"github.com/tessera-dev/tessera/shard/controllers/apibinder"
	"github.com/tessera-dev/tessera/shard/controllers/apibinding"
	"github.com/tessera-dev/tessera/shard/controllers/apiexport"
	"github.com/tessera-dev/tessera/shard/controllers/apiexportendpointslice"
	"github.com/tessera-dev/tessera/shard/controllers/clusterroleaggregation"
	computectrl "github.com/tessera-dev/tessera/shard/controllers/compute"
	crdctrl "github.com/tessera-dev/tessera/shard/controllers/crd"
	"github.com/tessera-dev/tessera/shard/controllers/defaultnamespace"
	"github.com/tessera-dev/tessera/shard/controllers/garbagecollector"
	"github.com/tessera-dev/tessera/shard/controllers/initializers"
	"github.com/tessera-dev/tessera/shard/controllers/logicalclusterdeletion"
	namespacectrl "github.com/tessera-dev/tessera/shard/controllers/namespace"
	"github.com/tessera-dev/tessera/shard/controllers/orphanlogicalclusters"
	"github.com/tessera-dev/tessera/shard/controllers/partitionset"
	serviceaccountctrl "github.com/tessera-dev/tessera/shard/controllers/serviceaccount"
	"github.com/tessera-dev/tessera/shard/controllers/serviceaccounttokens"
	workspacectrl "github.com/tessera-dev/tessera/shard/controllers/workspace"
	"github.com/tessera-dev/tessera/shard/controllers/workspacetype"
)

// runner is a controller the shard runs until it stops.
type runner interface {
	Name() string
	Run(ctx context.Context) error
}

// newControllers builds the shard's controllers over its shared informers.
// They must exist before the informers start, so their informers are
// started with the others.
func (s *Server) newControllers() error {
	kube, err := clusters.NewForConfig(s.Generic.LoopbackClientConfig)
	if err != nil {
		return err
	}
	dn, err := defaultnamespace.New(kube, s.Informers)
	if err != nil {
		return fmt.Errorf("default namespace controller: %w", err)
	}
	s.controllers = append(s.controllers, dn)

	loopback := s.Generic.LoopbackClientConfig
	ns, err := namespacectrl.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	sa, err := serviceaccountctrl.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("service account controller: %w", err)
	}
	gcc, err := garbagecollector.New(loopback, s.Informers,
		garbagecollector.WithBoundResources(s.boundWildcardCRD, s.apiBindings.Informer(), boundResourceNames))
	if err != nil {
		return fmt.Errorf("garbage collector: %w", err)
	}
	crds, err := crdctrl.New(loopback, s.Informers, s.builtinNames)
	if err != nil {
		return fmt.Errorf("CRD controllers: %w", err)
	}
	lcd, err := logicalclusterdeletion.New(loopback, s.Informers, s.DeleteClusterData)
	if err != nil {
		return fmt.Errorf("logical cluster deletion controller: %w", err)
	}
	cra, err := clusterroleaggregation.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("clusterrole aggregation controller: %w", err)
	}
	tokens, err := serviceaccounttokens.New(loopback, s.Informers.ServiceAccounts(), s.tokenSecrets.Secrets(), s.authnConfig.Issuer(), s.authnConfig.RootCA())
	if err != nil {
		return fmt.Errorf("service account token controller: %w", err)
	}
	vapStatus, err := admissionpolicystatus.New(kube, s.Informers)
	if err != nil {
		return fmt.Errorf("validating admission policy status controller: %w", err)
	}
	s.controllers = append(s.controllers, ns, sa, gcc, crds, lcd, cra, tokens, vapStatus)
	// Before the compute controllers, which add to what is replicated.
	if err := s.newReplication(); err != nil {
		return err
	}
	if err := s.newAPIControllers(kube); err != nil {
		return err
	}
	return s.newWorkspaceControllers()
}

// newAPIControllers builds the controllers of APIs as a service: export
// identities, bindings, endpoint slices, and the Partitions of
// PartitionSets that slices name.
func (s *Server) newAPIControllers(kube *clusters.ClusterClientset) error {
	shards := s.shards
	identities, err := apiexport.New(kube, s.kcpClients, s.Informers, &s.shards, func(e *apisv1alpha1.APIExport) []string {
		list, err := shards.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
		if err != nil {
			return nil
		}
		return apiexportendpointslice.URLs(list, s.pathOf, e)
	})
	if err != nil {
		return fmt.Errorf("APIExport identity controller: %w", err)
	}
	bindings, err := apibinding.New(apibinding.Config{
		Factory:     s.Informers,
		Exports:     &s.apiExports,
		Schemas:     &s.apiResourceSchemas,
		KCP:         s.kcpClients,
		Dynamic:     s.dynamicClients,
		ResolvePath: s.resolvePath,
		PathOf:      s.pathOf,
		Builtin: func(group, resource, identity string) bool {
			if s.builtinNames == nil || s.core.isCore(schema.GroupResource{Group: group, Resource: resource}, identity) {
				return false
			}
			resources, _ := s.builtinNames(group)
			return slices.Contains(resources, resource)
		},
		DeleteStored: s.deleteBoundObjects,
	})
	if err != nil {
		return fmt.Errorf("APIBinding controller: %w", err)
	}
	slices, err := apiexportendpointslice.New(apiexportendpointslice.Config{
		Factory:     s.Informers,
		KCP:         s.kcpClients,
		ResolvePath: s.resolvePath,
		PathOf:      s.pathOf,
		Shards:      &s.shards,
	})
	if err != nil {
		return fmt.Errorf("APIExportEndpointSlice controller: %w", err)
	}
	binder, err := apibinder.New(apibinder.Config{Factory: s.Informers, KCP: s.kcpClients, Types: s.lookupWorkspaceType, Exports: &s.apiExports, ResolvePath: s.resolvePath})
	if err != nil {
		return fmt.Errorf("apibinder: %w", err)
	}
	partitionSets, err := partitionset.New(s.kcpClients, s.Informers, &s.shards)
	if err != nil {
		return fmt.Errorf("PartitionSet controller: %w", err)
	}
	// kcp's transparent multi-cluster scheduling, once root's compute
	// exports have identities.
	compute := computectrl.New(computectrl.Config{
		Factory:     s.Informers,
		Exports:     &s.apiExports,
		Schemas:     &s.apiResourceSchemas,
		Shards:      &s.shards,
		Dynamic:     s.dynamicClients,
		Kube:        kube,
		KCP:         s.kcpClients,
		ResolvePath: s.resolvePath,
		PathOf:      s.pathOf,
		Replicas:    s.global,
		OwnReplica:  s.fromOtherShards,
		Replicate:   s.replication.Replicate,

		HeartbeatThreshold: s.Options.SyncTargetHeartbeatThreshold,
	})
	s.controllers = append(s.controllers, identities, bindings, slices, binder, partitionSets, compute)
	return nil
}

// pathOf returns the canonical path of a logical cluster of the shard, ""
// if unknown.
func (s *Server) pathOf(cluster logicalcluster.Name) string {
	lc, err := s.logicalClusters.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
	if err != nil {
		return ""
	}
	return lc.GetAnnotations()[logicalcluster.PathAnnotationKey]
}

// newWorkspaceControllers builds the controllers of workspaces: scheduling
// onto shards, WorkspaceType status, and the built-in initializers.
func (s *Server) newWorkspaceControllers() error {
	loopback := s.Generic.LoopbackClientConfig
	o := s.Options
	ws, err := workspacectrl.New(workspacectrl.Config{
		Informers:   s.Informers,
		ShardName:   o.ShardName,
		ShardConfig: s.shardConfig,
		Shards:      &s.shards,
		Loopback:    loopback,
		TypeLookup:  s.lookupWorkspaceType,
	})
	if err != nil {
		return fmt.Errorf("workspace controller: %w", err)
	}
	wt, err := workspacetype.New(workspacetype.Config{Informers: s.Informers, Shards: &s.shards, Loopback: loopback})
	if err != nil {
		return fmt.Errorf("workspacetype controller: %w", err)
	}
	in, err := initializers.New(initializers.Config{Informers: s.Informers, Loopback: loopback, ExternalURL: o.ShardExternalURL})
	if err != nil {
		return fmt.Errorf("built-in initializers: %w", err)
	}
	orphans, err := orphanlogicalclusters.New(orphanlogicalclusters.Config{
		LogicalClusters: s.logicalClusters,
		Owner:           s.ownerState,
		Delete: func(ctx context.Context, cluster logicalcluster.Name, uid types.UID) error {
			client, err := s.dynamicClients.For(cluster)
			if err != nil {
				return err
			}
			err = client.Resource(corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters")).Delete(ctx, corev1alpha1.LogicalClusterName,
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				return nil
			}
			return err
		},
		SweepInterval: o.OrphanLogicalClusterSweepInterval,
	})
	if err != nil {
		return fmt.Errorf("orphan logical cluster sweep: %w", err)
	}
	s.controllers = append(s.controllers, ws, wt, in, orphans)
	return nil
}

// ownerState tells whether the Workspace that owns a logical cluster
// exists, asking etcd and the API, never only a cache. A parent logical
// cluster that is not on this shard is asked of the shard that created
// the logical cluster (its owner-shard annotation): the owner is gone only
// when that shard says the parent or its Workspace is. Without the
// annotation (logical clusters made before it existed, or by hand), the
// owner is gone only in an installation of this one shard.
func (s *Server) ownerState(ctx context.Context, lc *corev1alpha1.LogicalCluster) (orphanlogicalclusters.OwnerState, error) {
	o := lc.Spec.Owner
	if o == nil || o.Resource != "workspaces" {
		return orphanlogicalclusters.OwnerUnknown, nil
	}
	parent := logicalcluster.Name(o.Cluster)
	if !parent.IsValid() {
		return orphanlogicalclusters.OwnerUnknown, nil
	}
	st, err := s.clusterState(parent)
	if err != nil {
		return orphanlogicalclusters.OwnerUnknown, err
	}
	if !st.Exists {
		ownerShard := lc.Annotations[corev1alpha1.LogicalClusterOwnerShardAnnotationKey]
		switch ownerShard {
		case "":
			if s.onlyShard() {
				return orphanlogicalclusters.OwnerGone, nil
			}
			return orphanlogicalclusters.OwnerUnknown, nil
		case s.Options.ShardName:
			// Made by this shard's workspace controller for a parent
			// here, which is gone.
			return orphanlogicalclusters.OwnerGone, nil
		}
		client, err := s.kcpFor(ownerShard, parent)
		if err != nil {
			return orphanlogicalclusters.OwnerUnknown, err
		}
		if _, err := client.LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{}); err != nil {
			if isNotFoundStatus(err) {
				return orphanlogicalclusters.OwnerGone, nil
			}
			return orphanlogicalclusters.OwnerUnknown, err
		}
		ws, err := client.Workspaces().Get(ctx, o.Name, metav1.GetOptions{})
		switch {
		case isNotFoundStatus(err):
			return orphanlogicalclusters.OwnerGone, nil
		case err != nil:
			return orphanlogicalclusters.OwnerUnknown, err
		case ws.UID != o.UID:
			return orphanlogicalclusters.OwnerGone, nil
		}
		return orphanlogicalclusters.OwnerExists, nil
	}
	// The common case, an owner the informer has, costs no request; only
	// an owner the cache does not show is looked up on the server.
	if ws, err := s.Informers.Workspaces().Lister().Cluster(parent).Get(o.Name); err == nil && ws.UID == o.UID {
		return orphanlogicalclusters.OwnerExists, nil
	}
	client, err := s.kcpClients.For(parent)
	if err != nil {
		return orphanlogicalclusters.OwnerUnknown, err
	}
	ws, err := client.Workspaces().Get(ctx, o.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return orphanlogicalclusters.OwnerGone, nil
	case err != nil:
		return orphanlogicalclusters.OwnerUnknown, err
	case ws.UID != o.UID:
		return orphanlogicalclusters.OwnerGone, nil
	}
	return orphanlogicalclusters.OwnerExists, nil
}

// shardConfig returns a config for a shard's base URL, with the shard's
// client certificate (system:masters, from the installation CA). Logical
// clusters are created on shards through it, also on this one: the same
// HTTPS path as across shards.
//
// Requests to this shard itself are not rate-limited on the client side,
// as the loopback clients are not: a limit there only slowed the shard's
// own work (deleting a tree of workspaces went at 67/s under the former
// 200 requests/s, 131-153/s without). Other shards are reached with a
// client-side limit, as their users' requests of group system:masters are
// exempt from their priority and fairness.
func (s *Server) shardConfig(shard *corev1alpha1.Shard) (*rest.Config, error) {
	if shard.Spec.BaseURL == "" {
		return nil, fmt.Errorf("shard %s has no baseURL", shard.Name)
	}
	cfg := &rest.Config{
		Host: shard.Spec.BaseURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile:   s.Certs.CA.CertFile,
			CertFile: s.Certs.ShardClient.CertFile,
			KeyFile:  s.Certs.ShardClient.KeyFile,
		},
		QPS:   remoteShardQPS,
		Burst: 2 * remoteShardQPS,
	}
	if shard.Name == s.Options.ShardName {
		cfg.QPS, cfg.Burst = -1, 0
	}
	return cfg, nil
}

// remoteShardQPS is the client-side limit of requests per second to
// another shard (per shard, all controllers together).
const remoteShardQPS = 1000

// lookupWorkspaceType finds a WorkspaceType by the canonical path or name
// of its logical cluster, on this shard.
func (s *Server) lookupWorkspaceType(ref tenancyv1alpha1.WorkspaceTypeReference) (*tenancyv1alpha1.WorkspaceType, error) {
	cluster := logicalcluster.Name(ref.Path)
	if strings.Contains(ref.Path, ":") && !cluster.IsSystem() {
		name, ok := s.resolvePath(logicalcluster.NewPath(ref.Path))
		if !ok {
			return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspacetypes"), ref.String())
		}
		cluster = name
	}
	if cluster == "" {
		cluster = logicalcluster.Root
	}
	return s.workspaceTypes.Lister().Cluster(cluster).Get(string(ref.Name))
}

// runControllers starts every controller; each runs until ctx is done.
func (s *Server) runControllers(ctx context.Context) {
	for _, c := range s.controllers {
		go func() {
			if err := c.Run(ctx); err != nil && ctx.Err() == nil {
				klog.FromContext(ctx).Error(err, "Controller stopped", "controller", c.Name())
			}
		}()
	}
}
