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
//   - /openapi/v3, whose root lists the cluster's CRD group versions with
//     their hashes next to the built-in ones, and /openapi/v3/apis/<g>/<v>
//     for those CRD group versions.
//
// The core group (/api, /api/v1) is the same everywhere and passes through,
// as does every other path, every non-GET request, and requests for the
// wildcard cluster or without a cluster, which so see the built-in documents.
//
// # Built-in documents
//
// The built-in documents are captured from the wrapped handler itself, by
// in-process GET requests for /apis (aggregated), /openapi/v3 and /openapi/v2
// on first need, once for all clusters. They are then revalidated at most
// every Config.BuiltinRecheckInterval with If-None-Match, so a change of the
// generic server's APIs is picked up without a restart. Requests the
// built-in documents answer alone go to the wrapped handler unchanged: every
// discovery and OpenAPI request of a cluster whose CRDs serve nothing, and
// built-in /apis/<group>, /apis/<group>/<version> and /openapi/v3/<path> in
// any cluster. The legacy /apis list of a cluster with CRDs, and a built-in
// /apis/<group> that CRDs add versions to, are asked of the wrapped handler
// per request, because the server addresses in them depend on the client.
//
// # Merging
//
// Only Established CRDs and their served versions count, described as
// apiextensions-apiserver describes them (resources, singular name, kind,
// verbs, short names, categories, status and scale subresources, scope,
// storage version hash). CRD groups follow the built-in groups, sorted by
// name; a group's versions are sorted by kube-aware version priority. A
// built-in group version shadows a CRD one. OpenAPI documents are built with
// apiextensions-apiserver's builder and merged as its controllers merge them.
//
// The OpenAPI v3 root lists serverRelativeURL values rooted at /openapi/v3,
// as the generic server does: client-go (since 1.28) resolves those below its
// base URL, so the /clusters/<name> prefix is kept. Redirects to the current
// hash are written relative to the request path for the same reason.
//
// # Caching
//
// Nothing is computed ahead of a request and nothing runs per cluster.
// Documents of a cluster with CRDs are built on its first request and kept in
// a least-recently-used cache bounded by Config.MaxClusters (OpenAPI v2, which
// copies the built-in document, in a smaller one). Each entry records a
// fingerprint of the CRDs (names, UIDs and resourceVersions) and the built-in
// documents it was merged with; it is rebuilt when either changes, and
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
