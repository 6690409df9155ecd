// Package apibinding binds APIExports into logical clusters: for every
// APIBinding of the shard it resolves the export (spec.reference.export,
// by workspace path or logical cluster name), checks that each of the
// export's latest APIResourceSchemas can be served in the binding's
// cluster without clashing with a built-in resource, a CRD of the cluster
// or another binding, and writes status.boundResources (schema name, UID
// and the export's identity hash), which is what makes the shard serve
// the resources (shard/server's bound CRDs). Conditions and phase follow
// kcp: APIExportValid, BindingUpToDate, InitialBindingCompleted, phase
// Binding then Bound. A binding that clashes keeps what it already serves
// and reports NamingConflicts naming the clash; a changed
// latestResourceSchemas is followed.
//
// Deleting a binding deletes the objects of its resources in its cluster
// first, through the API so that their finalizers are honoured, as kcp's
// apibinding deletion controller does (finalizer
// apis.kcp.io/apibinding-finalizer); then the resources stop being served.
//
// Checks of one logical cluster are serialised (striped locks), and a
// binding's new bound resources are awaited in the informer before the
// next binding of the cluster is checked, so two bindings never both
// claim a resource.
package apibinding
