// Package reconciler is the one controller loop every Tessera controller
// runs: a rate-limited work queue of typed Keys, N workers, a wait for
// informer caches, and a Reconciler that gets one Key at a time with a
// logger that names the logical cluster.
//
// A controller serves all logical clusters of a shard: its informers watch
// /clusters/* (package informers), its handlers enqueue Keys that carry the
// cluster, and nothing is started per logical cluster.
//
// Wiring, typically in a controller's controller.go:
//
//	c := reconciler.New("namespace-lifecycle", reconciler.Func(r.Reconcile), reconciler.Options{Workers: 4})
//	if err := c.Watch(factory.Namespaces().Informer(), c.EnqueueHandler()); err != nil { ... }
//	c.WaitFor(factory.ConfigMaps().Informer().HasSynced)
//	go c.Run(ctx)
package reconciler
