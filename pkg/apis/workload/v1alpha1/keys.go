package v1alpha1

// ResourceState is the value of a state.workload.kcp.io/<key> label: what
// the SyncTarget of that key does with the object.
type ResourceState string

const (
	// ResourceStatePending: scheduled, waiting for coordination.
	ResourceStatePending ResourceState = ""
	// ResourceStateSync: synced down to the SyncTarget.
	ResourceStateSync ResourceState = "Sync"
	// ResourceStateUpsync: synced up from the SyncTarget.
	ResourceStateUpsync ResourceState = "Upsync"
)

// Labels and annotations of workload objects, as kcp names them. <key> is
// a SyncTarget's key (see the label internal.workload.kcp.io/key).
const (
	// ClusterResourceStateLabelPrefix + <key> is the state label.
	ClusterResourceStateLabelPrefix = "state.workload.kcp.io/"
	// ClusterFinalizerAnnotationPrefix + <key> holds the time (RFC 3339)
	// after which a SyncTarget's removal may go ahead.
	ClusterFinalizerAnnotationPrefix = "finalizers.workload.kcp.io/"
	// InternalClusterDeletionTimestampAnnotationPrefix + <key> is the
	// deletion time the syncer of that SyncTarget sees.
	InternalClusterDeletionTimestampAnnotationPrefix = "deletion.internal.workload.kcp.io/"
	// InternalClusterStatusAnnotationPrefix + <key> holds the status a
	// SyncTarget reports, when more than one syncs the object.
	InternalClusterStatusAnnotationPrefix = "experimental.status.workload.kcp.io/"
	// ClusterSpecDiffAnnotationPrefix + <key> holds a JSON patch applied to
	// the spec for that SyncTarget.
	ClusterSpecDiffAnnotationPrefix = "experimental.spec-diff.workload.kcp.io/"
	// InternalDownstreamClusterLabel is the label of downstream objects
	// naming their SyncTarget's key.
	InternalDownstreamClusterLabel = "internal.workload.kcp.io/cluster"
	// AnnotationSkipDefaultObjectCreation on an APIBinding keeps the default
	// Placement from being created again once deleted.
	AnnotationSkipDefaultObjectCreation = "workload.kcp.io/skip-default-object-creation"
	// InternalSyncTargetKeyLabel is the SyncTarget's key.
	InternalSyncTargetKeyLabel = "internal.workload.kcp.io/key"
	// ComputeAPIExportAnnotationKey marks an APIExport as a compute
	// service's.
	ComputeAPIExportAnnotationKey = "extra.apis.kcp.io/compute.workload.kcp.io"
	// InternalWorkspaceURLAnnotationKey is the workspace URL on downstream
	// objects.
	InternalWorkspaceURLAnnotationKey = "internal.workload.kcp.io/workspace-url"
)

// Annotations of the volume coordination of kcp's storage design, which
// kcp never named: a PersistentVolume upsynced from one SyncTarget is
// switched to Sync once bound, then follows its claim to every SyncTarget
// the claim goes to.
const (
	// VolumeAnnotationPrefix is the prefix of the annotations below; they
	// stay upstream.
	VolumeAnnotationPrefix = "storage.workload.tessera.dev/"
	// VolumeProvisionedByAnnotationKey on an upstream PersistentVolume is
	// the key of the SyncTarget whose physical cluster provisioned it: its
	// downstream name there is its name upstream. Set by the switch from
	// Upsync to Sync.
	VolumeProvisionedByAnnotationKey = VolumeAnnotationPrefix + "provisioned-by"
	// VolumeReclaimByAnnotationKey on an upstream PersistentVolume is the
	// key of the one SyncTarget that releases the volume's storage once its
	// claim is deleted (the volume's reclaim policy Delete applies there,
	// Retain everywhere else).
	VolumeReclaimByAnnotationKey = VolumeAnnotationPrefix + "reclaim-by"
)
