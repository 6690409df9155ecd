// Package establishing is the CRD establishing controller of a shard: the
// cluster-aware counterpart of apiextensions-apiserver's
// EstablishingController.
//
// Once the naming controller has set NamesAccepted=True on a
// CustomResourceDefinition of any logical cluster, this controller sets
// Established=True (reason InitialNamesAccepted), after which the shard
// serves the CRD's resources. It does so at once: upstream waits a few
// seconds for the other API servers of an HA control plane to see the names,
// but a shard is the only server of its logical clusters. A CRD whose
// conversion webhook has an invalid CA bundle gets Established=False
// (reason InvalidCABundle) instead, as upstream.
package establishing
