// Package namespacelifecycle is the shard's NamespaceLifecycle admission
// plugin: Kubernetes' namespace lifecycle rules, applied per logical
// cluster.
//
// It refuses
//
//   - creating a namespaced object in a namespace that does not exist in the
//     request's logical cluster, with the NotFound error upstream returns
//     (404, `namespaces "x" not found`);
//   - creating a namespaced object in a namespace that is being terminated
//     (403, "unable to create new content in namespace x because it is being
//     terminated", with the NamespaceTerminating cause);
//   - deleting the namespaces default, kube-system and kube-public, as kcp's
//     WorkspaceNamespaceLifecycle plugin does (it wraps upstream's plugin
//     with those immortal namespaces), unless the logical cluster itself is
//     being deleted (its LogicalCluster "cluster" has a deletionTimestamp).
//
// Everything else is admitted: cluster-scoped resources, namespaces
// themselves, updates and deletes of namespaced objects, and
// localsubjectaccessreviews (answering those with "not found" would leak
// which namespaces exist).
//
// Admission attributes carry no logical cluster, so the plugin reads it
// from the request context (logicalcluster.ClusterFrom). Namespaces are
// looked up in a cluster-aware lister of the shard's wildcard namespace
// informer; on a cache miss, and for a namespace whose deletion this plugin
// admitted in the last 30 seconds while the cache still shows it active, it
// asks the API server with a live GET through a per-cluster client, as
// upstream does to cover informer lag. Unlike upstream it does not sleep
// 50ms before that GET: the GET is authoritative and only happens on a miss.
// The memory of recent deletions is a bounded LRU (DefaultLiveLookupEntries)
// for the whole shard.
//
// # Wiring
//
// The plugin is a validating admission.Interface for Create and Delete:
//
//	plugin, err := namespacelifecycle.NewForConfig(loopback, factory)
//	// factory is the shard's informers.SharedInformerFactory; NewForConfig
//	// asks it for the wildcard Namespaces informer and the unstructured
//	// informer of core.kcp.io/v1alpha1 logicalclusters (ForResource), so
//	// call it before factory.Start, or call factory.Start again after it.
//	// loopback is the shard's admin loopback config for its base URL.
//
// Put plugin into the shard's admission chain (for example
// admission.NewChainHandler(..., plugin) as the generic config's
// AdmissionControl) and pass the same chain to the custom resource handler.
// Until both informers have synced, creates in namespaces are refused with
// "not yet ready to handle request" after waiting up to 10 seconds, as
// upstream does. Name it PluginName in the chain for metrics.
package namespacelifecycle
