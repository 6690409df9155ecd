// Package finalizer is the CRD finalizer of a shard: the cluster-aware
// counterpart of apiextensions-apiserver's CRDFinalizer, which lets
// `kubectl delete crd` finish.
//
// Deleting a CustomResourceDefinition sets its deletionTimestamp and the
// finalizer customresourcecleanup.apiextensions.k8s.io. This controller then
// sets Terminating=True (InstanceDeletionInProgress), deletes every custom
// resource of the CRD in the CRD's logical cluster, and only there, through
// that cluster's REST API (DELETE collection per namespace that holds
// instances, or once for cluster-scoped resources, so admission runs), waits
// until none remain, and removes the finalizer together with
// Terminating=False (InstanceDeletionCompleted). While instances remain (for
// example because of their own finalizers) it looks again every few
// seconds. Failures are reported as Terminating=True with reason
// InstanceDeletionFailed and retried with backoff. A CRD that was never
// Established has no instances to delete (NeverEstablished), and CRDs whose
// instances overlap with built-in storage are left alone
// (OverlappingBuiltInResource), as upstream.
//
// Instances are listed and deleted through the first served version that
// answers (the storage version first); all versions share one storage, so
// one is enough. A CRD that serves no version at all cannot reach its
// instances through the API: it keeps its finalizer with
// InstanceDeletionFailed until a version is served again.
package finalizer
