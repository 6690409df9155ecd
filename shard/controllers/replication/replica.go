package replication

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// MaximalPermissionPolicyPrefix is the prefix of the users a maximal
// permission policy grants to (apis.kcp.io:binding:<user>).
const MaximalPermissionPolicyPrefix = "apis.kcp.io:binding:"

// Replicated tells whether objects of cluster are replicated at all: the
// system logical clusters are every shard's own.
func Replicated(cluster logicalcluster.Name) bool {
	return cluster != "" && !strings.HasPrefix(cluster.String(), "system:")
}

// replica turns a local object into what the cache should hold: an
// unstructured copy with apiVersion and kind, without resourceVersion and
// managedFields, with kcp.io/path when path is known. LogicalClusters keep
// only their metadata and status.phase, SyncTargets all but their last
// heartbeat time.
func replica(obj runtime.Object, gvk schema.GroupVersionKind, path string) (*unstructured.Unstructured, error) {
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = runtime.DeepCopyJSON(u.Object)
	} else {
		var err error
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	switch gvk.Kind {
	case "LogicalCluster":
		u.Object = logicalClusterReplica(u)
	case "SyncTarget":
		// Other shards read its Ready condition, which the heartbeat
		// makes; the heartbeat itself would rewrite the replica every
		// interval.
		unstructured.RemoveNestedField(u.Object, "status", "lastSyncerHeartbeatTime")
	}
	u.SetResourceVersion("")
	u.SetManagedFields(nil)
	if md, ok := u.Object["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
		delete(md, "creationTimestamp")
	}
	if path != "" {
		annotations := u.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[logicalcluster.PathAnnotationKey] = path
		u.SetAnnotations(annotations)
	}
	return u, nil
}

// logicalClusterAnnotations are the annotations of a LogicalCluster that
// other shards need: where it is, where in the tree, of which type, and
// who may enter.
var logicalClusterAnnotations = []string{
	logicalcluster.AnnotationKey,
	logicalcluster.PathAnnotationKey,
	"internal.tenancy.kcp.io/type",
	"core.kcp.io/shard",
	"authorization.kcp.io/required-groups",
}

// logicalClusterReplica keeps of a LogicalCluster its identity, those
// annotations, a deletionTimestamp and spec.owner: what changes once or
// twice in its life, so that its phase changes cost the cache nothing.
func logicalClusterReplica(u *unstructured.Unstructured) map[string]any {
	md := map[string]any{"name": u.GetName(), "uid": string(u.GetUID())}
	if ts, ok, _ := unstructured.NestedString(u.Object, "metadata", "creationTimestamp"); ok && ts != "" {
		md["creationTimestamp"] = ts
	}
	if ts, ok, _ := unstructured.NestedString(u.Object, "metadata", "deletionTimestamp"); ok && ts != "" {
		md["deletionTimestamp"] = ts
	}
	annotations := map[string]any{}
	for _, k := range logicalClusterAnnotations {
		if v, ok := u.GetAnnotations()[k]; ok {
			annotations[k] = v
		}
	}
	md["annotations"] = annotations
	out := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": md}
	if owner, ok, _ := unstructured.NestedMap(u.Object, "spec", "owner"); ok {
		out["spec"] = map[string]any{"owner": owner}
	}
	return out
}

// upToDate tells whether the cache's replica matches the desired one: equal
// but for what the cache owns (resourceVersion, kcp.io/shard) and
// managedFields.
func upToDate(desired, cached *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(comparable(desired), comparable(cached))
}

func comparable(u *unstructured.Unstructured) map[string]any {
	c := runtime.DeepCopyJSON(u.Object)
	m := &unstructured.Unstructured{Object: c}
	m.SetResourceVersion("")
	m.SetManagedFields(nil)
	annotations := m.GetAnnotations()
	delete(annotations, replicated.ShardAnnotationKey)
	if len(annotations) == 0 {
		annotations = nil
	}
	m.SetAnnotations(annotations)
	return c
}

// grantsKCPAccess tells whether a rule names apiexports (bind, content) or
// workspacetypes (use, initialize) explicitly: the rules other shards need
// to authorize against a replicated export or type.
func grantsKCPAccess(rule rbacv1.PolicyRule) bool {
	names := func(group string, resources ...string) bool {
		if !slices.Contains(rule.APIGroups, group) {
			return false
		}
		for _, r := range resources {
			if slices.Contains(rule.Resources, r) {
				return true
			}
		}
		return false
	}
	return names("apis.kcp.io", "apiexports", "apiexports/content") || names("tenancy.kcp.io", "workspacetypes")
}

// grantsToPolicyUser tells whether a binding has a maximal permission
// policy subject.
func grantsToPolicyUser(b *rbacv1.ClusterRoleBinding) bool {
	for _, s := range b.Subjects {
		if strings.HasPrefix(s.Name, MaximalPermissionPolicyPrefix) {
			return true
		}
	}
	return false
}
