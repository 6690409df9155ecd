// Package clusterroleaggregation holds the shard's ClusterRole aggregation
// controller: a ClusterRole with an aggregationRule gets as its rules the
// union of the rules of the other ClusterRoles of its logical cluster that
// its label selectors match, as kube-controller-manager's
// clusterrole-aggregation controller does. Aggregation never crosses
// logical clusters: the admin, edit and view roles of system:admin
// aggregate the roles of system:admin, and a cluster's own aggregated roles
// aggregate that cluster's roles.
//
// One controller serves all logical clusters of a shard through the
// wildcard ClusterRole informer. Its queue keys are aggregated ClusterRoles
// ({Cluster, Name}); when any ClusterRole of a cluster changes, the
// aggregated ClusterRoles of that cluster, found through an index
// (AggregatingIndex), are reconciled. Rules are written with server-side
// apply under the field manager clusterrole-aggregation-controller, forcing
// conflicts, as upstream does.
//
// # Wiring
//
//	c, err := clusterroleaggregation.New(loopback, factory)
//	// New asks factory (the shard's informers.SharedInformerFactory) for
//	// the wildcard ClusterRoles informer, adds its index and registers its
//	// handler; start the factory after New.
//	factory.Start(ctx)
//	go c.Run(ctx)
//
// loopback is the shard's admin loopback config for its base URL. The
// Controller has Name() and Run(ctx) error, like the shard's other
// controllers.
package clusterroleaggregation
