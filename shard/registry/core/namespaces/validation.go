package namespaces

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// standardFinalizers are the finalizer names that need no domain prefix.
var standardFinalizers = map[string]bool{
	string(corev1.FinalizerKubernetes): true,
	metav1.FinalizerOrphanDependents:   true,
	metav1.FinalizerDeleteDependents:   true,
}

// Validate validates a namespace: a DNS label as name, and qualified
// finalizer names in spec.finalizers.
func Validate(ns *corev1.Namespace) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
	return append(allErrs, validateFinalizers(ns.Spec.Finalizers, field.NewPath("spec", "finalizers"))...)
}

func validateFinalizers(finalizers []corev1.FinalizerName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range finalizers {
		name := string(f)
		// Kubernetes reports these on spec.finalizers, without the index.
		idxPath := fldPath
		if errs := apivalidation.ValidateFinalizerName(name, idxPath); len(errs) > 0 {
			allErrs = append(allErrs, errs...)
			continue
		}
		if !strings.Contains(name, "/") && !standardFinalizers[name] {
			allErrs = append(allErrs, field.Invalid(idxPath, name, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return allErrs
}

// ValidateUpdate validates an update of a namespace.
func ValidateUpdate(ns, old *corev1.Namespace) field.ErrorList {
	allErrs := Validate(ns)
	return append(allErrs, apivalidation.ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

// ValidateStatusUpdate validates a status update: the phase is Active while
// the namespace is not being deleted, and Terminating once it is.
func ValidateStatusUpdate(ns, old *corev1.Namespace) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	phasePath := field.NewPath("status", "phase")
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			allErrs = append(allErrs, field.Invalid(phasePath, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		allErrs = append(allErrs, field.Invalid(phasePath, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return allErrs
}

// ValidateFinalizeUpdate validates an update through the finalize
// subresource.
func ValidateFinalizeUpdate(ns, old *corev1.Namespace) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateFinalizers(ns.Spec.Finalizers, field.NewPath("spec", "finalizers"))...)
}
