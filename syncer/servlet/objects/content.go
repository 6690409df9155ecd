package objects

import (
	"encoding/json"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
)

// notContent are the top-level fields that are not synced as content.
var notContent = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "status": true}

// Content returns the top-level fields of obj that the servlet syncs: all
// but apiVersion, kind, metadata and status.
func Content(obj *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for k, v := range obj.Object {
		if !notContent[k] {
			out[k] = v
		}
	}
	return out
}

// ContentPatch returns the JSON merge patch that brings local's content to
// remote's, three-way: fields the servlet set before (the last-known state
// annotation) and remote dropped are removed, fields only the service
// cluster set (defaulting, mutating webhooks, controllers) are kept. It
// also sets the annotation to remote's content. It returns nil when
// nothing changes.
func ContentPatch(remote, local *unstructured.Unstructured) ([]byte, error) {
	modified, err := json.Marshal(Content(remote))
	if err != nil {
		return nil, err
	}
	current, err := json.Marshal(Content(local))
	if err != nil {
		return nil, err
	}
	original := []byte(local.GetAnnotations()[AnnotationLastKnownState])
	if len(original) == 0 {
		original = []byte("{}")
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current, mergepatch.RequireKeyUnchanged("apiVersion"))
	if err != nil {
		return nil, fmt.Errorf("computing the content patch: %w", err)
	}
	annotationChanged := string(original) != string(modified)
	if string(patch) == "{}" && !annotationChanged {
		return nil, nil
	}
	p := map[string]any{}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	if annotationChanged {
		p["metadata"] = map[string]any{"annotations": map[string]any{AnnotationLastKnownState: string(modified)}}
	}
	return json.Marshal(p)
}

// NewLocal returns the local copy of remote to create: its content, the
// local type, namespace and name, the labels tying it to remote plus
// remote's labels, and remote's annotations with the last-known state.
func NewLocal(remote *unstructured.Unstructured, apiVersion, kind, namespace, name string, ties map[string]string) (*unstructured.Unstructured, error) {
	content := Content(remote)
	state, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	local := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range content {
		local.Object[k] = v
	}
	local = local.DeepCopy()
	local.SetAPIVersion(apiVersion)
	local.SetKind(kind)
	local.SetNamespace(namespace)
	local.SetName(name)
	lbls := maps.Clone(remote.GetLabels())
	if lbls == nil {
		lbls = map[string]string{}
	}
	maps.Copy(lbls, ties)
	local.SetLabels(lbls)
	annotations := maps.Clone(remote.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, "kcp.io/cluster")
	annotations[AnnotationLastKnownState] = string(state)
	annotations[AnnotationRemoteName] = remote.GetName()
	local.SetAnnotations(annotations)
	return local, nil
}
