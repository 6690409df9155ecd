// Package resourcequotas is the registry of core v1 resourcequotas: scheme
// registration, the strategies of the quota and its status subresource,
// validation, storage and table printing.
package resourcequotas

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers ResourceQuota and ResourceQuotaList as core v1
// kinds and as kinds of the core group's internal version, and the field
// selector labels of ResourceQuota.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.ResourceQuota{}, &corev1.ResourceQuotaList{})
	return store.AddFieldLabels(s, corev1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion, "ResourceQuota")
}
