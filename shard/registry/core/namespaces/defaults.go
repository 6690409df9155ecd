package namespaces

import (
	corev1 "k8s.io/api/core/v1"
)

// SetDefaults sets status.phase to Active when unset and labels a named
// namespace with kubernetes.io/metadata.name. The "kubernetes" entry of
// spec.finalizers is added on create by the strategy, not here: it is
// removed during the life of a namespace, and defaulting runs on every read.
func SetDefaults(ns *corev1.Namespace) {
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
	// A namespace created with generateName gets its label in Canonicalize.
	if ns.Name != "" {
		setNameLabel(ns)
	}
}

// setNameLabel labels ns with its name, so that label selectors (network
// policies, webhooks' namespaceSelector) can select namespaces by name.
func setNameLabel(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}
