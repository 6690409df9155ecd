// Package apiapproval maintains the KubernetesAPIApprovalPolicyConformant
// condition of CustomResourceDefinitions in every logical cluster of a
// shard: the cluster-aware counterpart of apiextensions-apiserver's
// KubernetesAPIApprovalPolicyConformantConditionController.
//
// Only CRDs of protected community groups (k8s.io, kubernetes.io and their
// subdomains) get the condition. It reflects the
// api-approved.kubernetes.io annotation: True (ApprovedAnnotation) for a
// link to the approving pull request, False for a missing (MissingAnnotation),
// invalid (InvalidAnnotation) or "unapproved" (UnapprovedAnnotation) value.
package apiapproval
