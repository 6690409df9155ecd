// Package crd holds the CustomResourceDefinition controllers of a shard,
// the cluster-aware replacements of apiextensions-apiserver's controllers
// (whose listers are global and keyed by name). Each lives in its own
// package and serves all logical clusters of the shard through the wildcard
// CRD informer; nothing is started per logical cluster:
//
//   - naming: accepts names per (logical cluster, group), NamesAccepted,
//     never names of the group's built-in APIs;
//   - establishing: Established once the names are accepted;
//   - apiapproval: KubernetesAPIApprovalPolicyConformant for *.k8s.io and
//     *.kubernetes.io groups;
//   - finalizer: deletes the custom resources of a deleted CRD in its
//     logical cluster and removes the customresourcecleanup finalizer.
//
// All status writes are JSON merge patches of the customresourcedefinitions/
// status subresource computed from the cached object, conditional on its
// resourceVersion.
//
// # Wiring in the shard
//
// New builds all four on one http.Client from the shard's loopback config
// (an admin of every logical cluster that may use /clusters/*; a trailing
// /clusters/<name> is ignored). They share the shard's informer factory,
// whose Clients must include APIExtensions; New must run before the
// factory starts. *Controllers has Name and Run(ctx) error, so in
// shard/server/controllers.go (newControllers):
//
//	crds, err := crd.New(s.Generic.LoopbackClientConfig, s.Informers, s.builtinNames)
//	if err != nil {
//		return fmt.Errorf("CRD controllers: %w", err)
//	}
//	s.controllers = append(s.controllers, crds)
//
// runControllers then runs it until the shard stops; Run waits for the CRD
// informer to sync and returns when ctx is done and every reconcile in
// flight has finished. Without these controllers no CRD is ever Established
// (so none is served) and `kubectl delete crd` hangs on its finalizer.
//
// To wire them one by one instead (for example with clients shared with
// other controllers), use naming.New, establishing.New and apiapproval.New
// with a clusters.APIExtensionsClusterClientset, and finalizer.New with that
// and a clusters.DynamicClusterClient, then Run each; each has Name too.
package crd
