package objects

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

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

// syncedMetadata returns the labels and annotations of obj that are synced:
// all but the logical cluster's and kcp's (kcp.io/...) and the servlet's
// own.
func syncedMetadata(obj *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for field, values := range map[string]map[string]string{"labels": obj.GetLabels(), "annotations": obj.GetAnnotations()} {
		kept := map[string]any{}
		for k, v := range values {
			if !internalKey(k) {
				kept[k] = v
			}
		}
		if len(kept) > 0 {
			out[field] = kept
		}
	}
	return out
}

// internalKey tells whether a label or annotation key belongs to kcp or the
// servlet, never synced.
func internalKey(k string) bool {
	prefix, _, found := strings.Cut(k, "/")
	return found && (prefix == "kcp.io" || strings.HasSuffix(prefix, ".kcp.io") || prefix == "servlet.kdp.k8c.io")
}

// syncedState is what the servlet copies from a remote object: its content
// and, under metadata, its synced labels and annotations.
func syncedState(obj *unstructured.Unstructured) map[string]any {
	state := Content(obj)
	if md := syncedMetadata(obj); len(md) > 0 {
		state["metadata"] = md
	}
	return state
}

// ContentPatch returns the JSON merge patch that brings local's content
// and synced labels and annotations to remote's, three-way: fields the servlet set before (the last-known state
// annotation) and remote dropped are removed, fields only the service
// cluster set (defaulting, mutating webhooks, controllers) are kept. It
// also sets the annotation to remote's content. It returns nil when
// nothing changes.
func ContentPatch(remote, local *unstructured.Unstructured) ([]byte, error) {
	modified, err := json.Marshal(syncedState(remote))
	if err != nil {
		return nil, err
	}
	current, err := json.Marshal(syncedState(local))
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
		md, _ := p["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
		}
		annotations, _ := md["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
		}
		annotations[AnnotationLastKnownState] = string(modified)
		md["annotations"] = annotations
		p["metadata"] = md
	}
	return json.Marshal(p)
}

// NewLocal returns the local copy of remote to create: its content, the
// local type, namespace and name, the labels tying it to remote plus
// remote's synced labels, and remote's synced annotations with the
// last-known state.
func NewLocal(remote *unstructured.Unstructured, apiVersion, kind, namespace, name string, ties map[string]string) (*unstructured.Unstructured, error) {
	content := Content(remote)
	state, err := json.Marshal(syncedState(remote))
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
	lbls := map[string]string{}
	for k, v := range remote.GetLabels() {
		if !internalKey(k) {
			lbls[k] = v
		}
	}
	maps.Copy(lbls, ties)
	local.SetLabels(lbls)
	annotations := map[string]string{}
	for k, v := range remote.GetAnnotations() {
		if !internalKey(k) {
			annotations[k] = v
		}
	}
	annotations[AnnotationLastKnownState] = string(state)
	annotations[AnnotationRemoteName] = remote.GetName()
	local.SetAnnotations(annotations)
	return local, nil
}
