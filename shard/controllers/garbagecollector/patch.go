package garbagecollector

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The garbage collector writes objects with JSON merge patches, which every
// resource supports (custom resources have no strategic merge patch). Each
// patch carries the uid and resourceVersion it was computed from: the
// write fails with a conflict if the object changed meanwhile, and is
// retried from fresher state.

// ownerReferencesPatch returns a patch that sets the owner references of m
// to refs; no refs remove the field.
func ownerReferencesPatch(m *metav1.PartialObjectMetadata, refs []metav1.OwnerReference) ([]byte, error) {
	var value any
	if len(refs) > 0 {
		value = refs
	}
	return metadataPatch(m, "ownerReferences", value)
}

// finalizersPatch returns a patch that sets the finalizers of m to
// finalizers; none remove the field.
func finalizersPatch(m *metav1.PartialObjectMetadata, finalizers []string) ([]byte, error) {
	var value any
	if len(finalizers) > 0 {
		value = finalizers
	}
	return metadataPatch(m, "finalizers", value)
}

func metadataPatch(m *metav1.PartialObjectMetadata, field string, value any) ([]byte, error) {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"uid":             m.UID,
			"resourceVersion": m.ResourceVersion,
			field:             value,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("building patch of %s: %w", field, err)
	}
	return patch, nil
}
