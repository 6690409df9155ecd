// Package naming is the CRD naming controller of a shard: the cluster-aware
// counterpart of apiextensions-apiserver's NamingConditionController.
//
// For every CustomResourceDefinition of every logical cluster it accepts
// the requested names (plural, singular, short names, kind, list kind) into
// status.acceptedNames unless another CRD of the same group in the same
// logical cluster has already accepted them, and sets the NamesAccepted
// condition: True with reason NoConflicts, or False with reason
// PluralConflict, SingularConflict, ShortNamesConflict, KindConflict or
// ListKindConflict and a message like `"widgets" is already in use`. CRDs of
// other logical clusters never conflict. The names the shard's built-in APIs
// of the group use (New's BuiltinNames, in any version) are never free:
// `"leases" is already in use by a built-in API of the group`. Every other
// resource of a built-in group is served from its CRD, in a built-in
// version or a new one (see shard/server delegateUnroutable). Like upstream it sets Established
// to False (NotAccepted, or Installing once the names are accepted) until the
// establishing controller sets it to True.
//
// Names are reserved per (logical cluster, group): reconciles of CRDs of one
// group in one cluster are serialised, and the controller reads its own
// status writes back until the informer has caught up with them, so two
// CRDs never accept the same name. Reconciles of different groups or
// clusters run in parallel.
package naming
