// Package crdstatus writes the status (and finalizers) of
// CustomResourceDefinitions for the CRD controllers of a shard: as JSON
// merge patches computed from the cached object and its changed copy, sent
// to the customresourcedefinitions/status subresource of the CRD's logical
// cluster, conditional on the cached resourceVersion.
package crdstatus

import (
	"context"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Patcher writes the difference between old, an object from an informer
// cache, and new, a changed copy of it, to the status subresource of the CRD
// in cluster. It returns the CRD as the server stored it, or old when there
// is nothing to write. A Conflict error means old was stale.
type Patcher func(ctx context.Context, cluster logicalcluster.Name, old, new *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error)

// NewPatcher returns a Patcher that sends its patches with client.
func NewPatcher(client *clusters.APIExtensionsClusterClientset) Patcher {
	return func(ctx context.Context, cluster logicalcluster.Name, old, new *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
		patch, err := Patch(old, new)
		if err != nil || patch == nil {
			return old, err
		}
		c, err := client.For(cluster)
		if err != nil {
			return nil, err
		}
		updated, err := c.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, old.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if err != nil {
			return nil, fmt.Errorf("patching status of CustomResourceDefinition %s: %w", old.Name, err)
		}
		return updated, nil
	}
}

// writable is the part of a CRD that the status subresource lets the CRD
// controllers change.
type writable struct {
	Metadata writableMeta                                   `json:"metadata"`
	Status   apiextensionsv1.CustomResourceDefinitionStatus `json:"status"`
}

type writableMeta struct {
	Finalizers []string `json:"finalizers,omitempty"`
}

// Patch returns the JSON merge patch that turns old's status and finalizers
// into new's, with old's resourceVersion and UID as preconditions, or nil
// when they do not differ. Other changes of new are ignored.
func Patch(old, new *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	oldJSON, err := json.Marshal(writable{Metadata: writableMeta{Finalizers: old.Finalizers}, Status: old.Status})
	if err != nil {
		return nil, fmt.Errorf("encoding CustomResourceDefinition %s: %w", old.Name, err)
	}
	newJSON, err := json.Marshal(writable{Metadata: writableMeta{Finalizers: new.Finalizers}, Status: new.Status})
	if err != nil {
		return nil, fmt.Errorf("encoding CustomResourceDefinition %s: %w", new.Name, err)
	}
	diff, err := jsonmergepatch.CreateThreeWayJSONMergePatch(oldJSON, newJSON, oldJSON)
	if err != nil {
		return nil, fmt.Errorf("computing status patch of CustomResourceDefinition %s: %w", old.Name, err)
	}
	patch := map[string]any{}
	if err := json.Unmarshal(diff, &patch); err != nil {
		return nil, fmt.Errorf("decoding status patch of CustomResourceDefinition %s: %w", old.Name, err)
	}
	if len(patch) == 0 {
		return nil, nil
	}
	meta, _ := patch["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		patch["metadata"] = meta
	}
	meta["resourceVersion"] = old.ResourceVersion
	meta["uid"] = string(old.UID)
	out, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encoding status patch of CustomResourceDefinition %s: %w", old.Name, err)
	}
	return out, nil
}
