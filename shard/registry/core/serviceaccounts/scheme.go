// Package serviceaccounts is the registry of core v1 serviceaccounts: scheme
// registration, strategy, validation, storage and table printing.
package serviceaccounts

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers ServiceAccount and ServiceAccountList as core v1
// kinds and as kinds of the core group's internal version, and the field
// selector labels of ServiceAccount. Service accounts have no defaults:
// automountServiceAccountToken stays unset unless the user sets it.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.ServiceAccount{}, &corev1.ServiceAccountList{})
	return store.AddFieldLabels(s, corev1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion, "ServiceAccount")
}
