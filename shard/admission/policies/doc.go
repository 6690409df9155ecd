// Package policies enforces the ValidatingAdmissionPolicies of a logical
// cluster, with their bindings and params, for requests in that cluster
// only, with k8s.io/apiserver's policy dispatcher
// (k8s.io/apiserver/pkg/admission/plugin/policy/validating).
//
// Upstream's plugin keeps a policy source that runs informers and a
// goroutine, and an informer per param kind; per logical cluster that would
// start something for every cluster. Here nothing runs per cluster: the
// policies and bindings of a request's cluster are read from the shard's
// shared informers (one per resource, indexed by cluster), compiled
// evaluators are kept in one bounded LRU keyed by the policy's UID and
// generation, and params are read with the shard's loopback client when a
// binding asks for them. Per request, upstream's dispatcher is built over a
// matcher that sees the cluster's namespaces; it matches policies and
// bindings, collects params, evaluates the CEL validations and reports
// Deny, Warn and Audit actions as kube-apiserver does.
//
// compile re-implements upstream's unexported compilePolicy with the same
// exported pieces; TestCompileMatchesUpstream pins it against upstream's
// own plugin.
package policies
