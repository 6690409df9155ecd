// Package clusters derives logical-cluster scoped clients from the
// rest.Config of a shard.
//
// A shard serves every logical cluster under /clusters/<name> and all of them
// at once under /clusters/* (wildcard list and watch). ConfigFor and
// WildcardConfig rewrite a base config to one of those endpoints. Cache, and
// its instances ClusterClientset, DynamicClusterClient and
// APIExtensionsClusterClientset, hand out clients per logical cluster that
// all share one http.Client (one transport, one connection pool) and one client
// side rate limiter, so that the number of logical clusters never multiplies
// connections, goroutines or rate limits.
package clusters
