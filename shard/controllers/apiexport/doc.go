// Package apiexport gives every APIExport of the shard its identity, as
// kcp does: an export without spec.identity.secretRef gets one pointing at
// the Secret kcp-system/<export name> of its logical cluster, which the
// controller creates (with the namespace) holding a random key;
// status.identityHash is the hex SHA-256 of the Secret's "key", and the
// IdentityValid condition says whether it still is. An identity once
// published never changes: a Secret that goes missing or hashes to another
// identity makes IdentityValid False (IdentityVerificationFailed) and
// leaves status.identityHash as it was, because the objects of every
// binding to the export are stored under it.
//
// Secrets are read through the API when an export is reconciled, not from
// an informer: a shard-wide informer would hold every tenant's Secrets in
// memory for a handful of identities. An export whose identity cannot be
// verified is looked at again every RecheckInterval.
package apiexport
