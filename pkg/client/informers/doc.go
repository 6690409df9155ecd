// Package informers holds the cluster-aware informer layer of a shard:
// shared informers over the wildcard endpoint /clusters/* whose stores key
// objects by cluster|namespace/name, indexes by logical cluster and by
// cluster and namespace, generic listers that read one logical cluster in
// O(objects in that cluster), and a SharedInformerFactory with one informer
// per resource for all logical clusters.
//
// Stock client-go informers cannot be used on /clusters/*: their store and
// FIFO key objects by namespace/name, and their WatchList initial sync keeps
// a temporary store keyed the same way, so objects with the same
// namespace/name in different logical clusters overwrite each other. The
// informer in this package is assembled from the exported client-go parts
// (Reflector via cache.New, RealFIFO and Indexer with KeyFunc) and always
// runs with WatchList off for its ListerWatcher (see NoWatchList).
package informers
