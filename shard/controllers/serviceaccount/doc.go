// Package serviceaccount holds the shard's service account controller: every
// namespace of every logical cluster gets a ServiceAccount named "default",
// recreated when it is deleted, like the serviceaccounts controller of
// kube-controller-manager. Tokens are not its business.
//
// One controller serves all logical clusters of a shard through the
// wildcard namespace and service account informers; its queue keys are
// namespaces ({Cluster, Name: namespace}). A namespace is reconciled when it
// is added or updated while active, and when its "default" service account
// is deleted. Terminating namespaces are left alone.
//
// # Wiring
//
//	c, err := serviceaccount.New(loopback, factory) // optional: serviceaccount.WithWorkers(n)
//	// New asks factory (the shard's informers.SharedInformerFactory) for
//	// the wildcard Namespaces and ServiceAccounts informers and registers
//	// its handlers; start the factory after New.
//	factory.Start(ctx)
//	go c.Run(ctx)
//
// loopback is the shard's admin loopback config for its base URL; the
// controller creates service accounts through per-cluster clients derived
// from it. The Controller has Name() and Run(ctx) error, like the shard's
// other controllers. Run waits for both informers to sync and returns when
// ctx is done.
package serviceaccount
