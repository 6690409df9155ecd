// Package discovery serves API discovery and OpenAPI per logical cluster.
//
// The shard's generic API server serves the built-in API groups for every
// logical cluster, and its discovery and OpenAPI endpoints know only those.
// Each logical cluster also serves its own CRDs. Wrap puts a Handler in front
// of the generic server's API handler that answers, for the request's
// logical cluster (logicalcluster.ClusterFrom):
//
//   - /apis, legacy (APIGroupList) and aggregated (apidiscovery.k8s.io v2 and,
//     unless its removal gate is on, v2beta1, with ETag and If-None-Match);
//   - /apis/<group> (APIGroup) and /apis/<group>/<version>
//     (APIResourceList), and a 404 Status for a group or version the cluster
//     does not serve, such as a CRD group of another cluster;
//   - /openapi/v2 (JSON and protobuf);
//   - /api/v1 (APIResourceList) and aggregated /api (v2 and v2beta1, with
//     ETag), when the cluster has CRDs of the core group (group "", as
//     kcp's compute export kubernetes binds Services, Pods and Endpoints);
//   - /openapi/v3, whose root lists the cluster's CRD group versions with
//     their hashes next to the built-in ones, and /openapi/v3/apis/<g>/<v>
//     (/openapi/v3/api/v1 for the core group) for those CRD group versions
//     and the built-in ones CRDs add resources to.
//
// The legacy /api (APIVersions) is the same everywhere and passes through,
// as do /api/v1 and aggregated /api of a cluster without CRDs of the core
// group, every other path, every non-GET request, and requests without a
// cluster, which so see the built-in documents. Requests across all
// clusters (/clusters/*) see the CRDs that Config.CRDs returns for
// logicalcluster.Wildcard: the shard's synthetic CRD per CRD name, which
// serves wildcard lists and watches schema-agnostically.
//
// # Built-in documents
//
// The built-in documents are captured from the wrapped handler itself, by
// in-process GET requests for /apis (aggregated), /openapi/v3 and /openapi/v2
// on first need, once for all clusters, and /api (aggregated) on the first
// need of a cluster with CRDs of the core group. They are then revalidated at most
// every Config.BuiltinRecheckInterval with If-None-Match, so a change of the
// generic server's APIs is picked up without a restart. Requests the
// built-in documents answer alone go to the wrapped handler unchanged: every
// discovery and OpenAPI request of a cluster whose CRDs serve nothing, and
// built-in /apis/<group>, /apis/<group>/<version> and /openapi/v3/<path> that
// the cluster's CRDs add nothing to. The legacy /apis list of a cluster with
// CRDs, and a built-in /apis/<group> or /apis/<group>/<version> that CRDs add
// versions or resources to, are asked of the wrapped handler per request,
// because the server addresses in them depend on the client; so is /api/v1
// of a cluster with CRDs of the core group, to merge them in.
//
// # Merging
//
// Only Established CRDs and their served versions count, described as
// apiextensions-apiserver describes them (resources, singular name, kind,
// verbs, short names, categories, status and scale subresources, scope,
// storage version hash). CRD groups follow the built-in groups, sorted by
// name; a group's versions are sorted by kube-aware version priority. CRDs
// may add versions to a built-in group (after the built-in ones, so the
// preferred version stays) and resources to a built-in group version: the
// shard serves them (shard/server delegateUnroutable), so they are
// advertised in aggregated discovery, /apis/<group>, /apis/<group>/<version>
// and OpenAPI. A built-in resource shadows a CRD resource of the same name
// or kind in its group version (the CRD naming controller refuses such
// names anyway). kube-apiserver differs: it advertises CRD versions of a
// built-in group but answers 404 for them, and hides CRD resources of a
// built-in group version.
//
// The core group is a built-in group that only its version v1 can get CRD
// resources in (other core versions of CRDs are not advertised, nor
// served). It is never listed in /apis: clients merge the groups of /api and
// /apis, and a group "" there would replace core v1. Its CRD resources join
// /api/v1, aggregated /api and /openapi/v3/api/v1, where the paths the
// builder makes (/apis//v1/...) are moved to /api/v1/..., as the shard
// serves them (shard/server delegateUnroutable).
//
// OpenAPI documents are built with
// apiextensions-apiserver's builder and merged as its controllers merge
// them; a built-in group version's OpenAPI v3 document with CRD resources
// is the built-in document, fetched from the wrapped handler, with the CRDs
// merged in.
//
// The OpenAPI v3 root lists serverRelativeURL values rooted at /openapi/v3,
// as the generic server does: client-go (since 1.28) resolves those below its
// base URL, so the /clusters/<name> prefix is kept. Redirects to the current
// hash are written relative to the request path for the same reason.
//
// # Caching
//
// Nothing is computed ahead of a request and nothing runs per cluster: a
// cluster whose documents nobody asks for costs nothing. Documents of a
// cluster with CRDs are built on its first request and kept in a
// least-recently-used cache bounded by Config.MaxClusters. OpenAPI v2, whose
// document per cluster is a whole copy of the built-in one, is built only
// when asked for, kept encoded (JSON, and protobuf once asked for) and in a
// second cache bounded by Config.MaxClusters and by the bytes of those
// encodings, Config.MaxOpenAPIV2Bytes. Each entry records a fingerprint of
// the CRDs (names, UIDs and resourceVersions) and the built-in documents it
// was merged with; it is rebuilt when either changes, and
// Handler.Invalidate drops it at once.
//
// # Wiring
//
// Wrap must see the request's logical cluster and run after authentication
// and authorization, and its next must be the generic server's API handler:
//
//	gc.BuildHandlerChainFunc = func(api http.Handler, c *genericapiserver.Config) http.Handler {
//		d := discovery.Wrap(api, discovery.Config{CRDs: crdsOfCluster, Serializer: c.Serializer})
//		// keep d; call d.Invalidate(cluster) from the CRD informer's handlers
//		return filters.WithCluster(genericapiserver.DefaultBuildHandlerChain(d, c), codecs)
//	}
package discovery
