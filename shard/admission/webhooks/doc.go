// Package webhooks calls the admission webhooks of a logical cluster, for
// requests in that cluster only, with k8s.io/apiserver's webhook plugins
// (MutatingAdmissionWebhook and ValidatingAdmissionWebhook).
//
// Upstream's plugins read their configurations from a SharedInformerFactory
// and namespaces from a NamespaceLister, neither of which knows logical
// clusters, and their dispatch has no way to pass the request's cluster to
// them. So a shard keeps one upstream plugin per logical cluster that holds
// webhook configurations and was written to recently (a bounded LRU; a
// plugin costs about 430 KiB, mostly upstream's CEL environments, and is
// built again in about 4 ms when its cluster comes back). Each sees the
// cluster through a view of the shard's shared informers (one per
// resource, indexed by cluster): its configuration and namespace listers
// read that cluster only, and the configuration informer's event handlers
// are called by the one handler the shard registers on the shared
// informer. Nothing runs per cluster: the views start no goroutine and no
// informer. A cluster without configurations costs nothing, and its
// requests one index lookup.
//
// Webhooks are called at URLs only: a logical cluster has no Services, so
// configurations with a service reference are refused when written, and
// the service resolver refuses what was stored before.
package webhooks
