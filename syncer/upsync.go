package syncer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// upsynced are the resources that go up instead of down, as kcp's storage
// design has it: a PersistentVolume is made in the physical cluster (by
// its provisioner, for a claim synced down), and the workspace gets a copy
// bound to the claim, so that it knows the volume even when the physical
// cluster is gone.
var upsynced = map[string]bool{"persistentvolumes": true}

// upsyncKeyOf keys an upsynced object of either side by its name, which it
// keeps upstream (PersistentVolumes are cluster-scoped on both sides).
func (e *engine) upsyncKeyOf(obj any) []reconciler.Key {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return []reconciler.Key{{Name: u.GetName()}}
	}
	return nil
}

// claimOf returns the upstream claim of a downstream PersistentVolume: the
// locator of its claim's namespace, when that is one of the SyncTarget's,
// and the claim's name.
func (e *engine) claimOf(down *unstructured.Unstructured) (NamespaceLocator, string, bool) {
	ns, _, _ := unstructured.NestedString(down.Object, "spec", "claimRef", "namespace")
	name, _, _ := unstructured.NestedString(down.Object, "spec", "claimRef", "name")
	if ns == "" || name == "" {
		return NamespaceLocator{}, "", false
	}
	l, ok := e.s.locatorOf(ns)
	if !ok || l.SyncTarget.UID != e.s.UID || !logicalcluster.Name(l.Cluster).IsValid() {
		return NamespaceLocator{}, "", false
	}
	return l, name, true
}

// reconcileUpsync keeps the upstream copy of one downstream
// PersistentVolume: present, as it is downstream, in the workspace of the
// claim it is bound to, while the volume exists and is bound to a claim the
// SyncTarget synced; deleted otherwise (and everywhere else).
func (e *engine) reconcileUpsync(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	var down *unstructured.Unstructured
	if obj, exists, err := e.downstream.GetStore().GetByKey(key.Name); err != nil {
		return reconciler.Result{}, err
	} else if exists {
		down = obj.(*unstructured.Unstructured)
	}
	var loc NamespaceLocator
	var claim string
	claimed := false
	// A volume the syncer applied is synced down from upstream now (the
	// volume coordination switched it to Sync), not up.
	if down != nil && down.GetDeletionTimestamp() == nil && down.GetLabels()[workloadv1alpha1.InternalDownstreamClusterLabel] != e.s.Key {
		loc, claim, claimed = e.claimOf(down)
	}

	// The upstream copies of that name, in every workspace of every shard.
	type copyOf struct {
		src upstreamSource
		obj *unstructured.Unstructured
	}
	var copies []copyOf
	for _, src := range e.upstream {
		for _, obj := range src.informer.GetStore().List() {
			if u := obj.(*unstructured.Unstructured); u.GetName() == key.Name {
				copies = append(copies, copyOf{src, u})
			}
		}
	}
	var current *copyOf
	for i := range copies {
		c := copies[i]
		if claimed && logicalcluster.From(c.obj).String() == loc.Cluster {
			current = &copies[i]
			continue
		}
		client, err := c.src.clients.For(logicalcluster.From(c.obj))
		if err != nil {
			return reconciler.Result{}, err
		}
		uid := c.obj.GetUID()
		err = client.Resource(e.resource.gvr).Delete(ctx, key.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return reconciler.Result{}, fmt.Errorf("deleting the upstream copy of %s %s: %w", e.resource.gvr.Resource, key.Name, err)
		}
		klog.FromContext(ctx).V(2).Info("Deleted an upsynced object", "resource", e.resource.gvr.Resource, "name", key.Name, "cluster", logicalcluster.From(c.obj))
	}
	if !claimed {
		return reconciler.Result{}, nil
	}

	desired, err := desiredUpstream(down, loc.Namespace, claim)
	if err != nil {
		return reconciler.Result{}, err
	}
	var src upstreamSource
	if current != nil {
		src = current.src
	} else if src, claimed = e.sourceOfClaim(loc, claim); !claimed {
		// The claim's shard has not shown it yet.
		return reconciler.Result{RequeueAfter: time.Second}, nil
	}
	client, err := src.clients.For(logicalcluster.Name(loc.Cluster))
	if err != nil {
		return reconciler.Result{}, err
	}
	resource := client.Resource(e.resource.gvr)
	up := (*unstructured.Unstructured)(nil)
	switch {
	case current == nil:
		if up, err = resource.Create(ctx, desired, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return reconciler.Result{}, nil // its event comes
			}
			return reconciler.Result{}, fmt.Errorf("upsyncing %s %s to %s: %w", e.resource.gvr.Resource, key.Name, loc.Cluster, err)
		}
		klog.FromContext(ctx).V(2).Info("Upsynced", "resource", e.resource.gvr.Resource, "name", key.Name, "cluster", loc.Cluster)
	case current.obj.GetAnnotations()[AppliedAnnotation] != desired.GetAnnotations()[AppliedAnnotation]:
		desired.SetResourceVersion(current.obj.GetResourceVersion())
		if up, err = resource.Update(ctx, desired, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return reconciler.Result{}, nil
			}
			return reconciler.Result{}, err
		}
	default:
		up = current.obj
	}
	if status, ok := down.Object["status"]; ok && !equality.Semantic.DeepEqual(status, up.Object["status"]) {
		withStatus := up.DeepCopy()
		withStatus.Object["status"] = runtime.DeepCopyJSONValue(status)
		if _, err := resource.UpdateStatus(ctx, withStatus, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return reconciler.Result{}, fmt.Errorf("writing the status of the upsynced %s %s: %w", e.resource.gvr.Resource, key.Name, err)
		}
	}
	return reconciler.Result{}, nil
}

// sourceOfClaim returns the upsyncer source of the shard that holds the
// claim's logical cluster: the one whose syncer virtual workspace shows the
// claim (a SyncTarget's workspaces may be on every shard of the
// installation, and a volume goes up to its claim's).
func (e *engine) sourceOfClaim(loc NamespaceLocator, claim string) (upstreamSource, bool) {
	if len(e.upstream) == 1 {
		return e.upstream[0], true
	}
	key := informers.ToKey(logicalcluster.Name(loc.Cluster), loc.Namespace, claim)
	for _, claims := range e.s.runningEngines() {
		if claims.resource.upsync || claims.resource.gvr.Group != "" || claims.resource.gvr.Resource != "persistentvolumeclaims" {
			continue
		}
		for _, c := range claims.upstream {
			if _, ok, _ := c.informer.GetIndexer().GetByKey(key); !ok {
				continue
			}
			want := strings.Replace(c.url, "/services/syncer/", "/services/upsyncer/", 1)
			for _, src := range e.upstream {
				if src.url == want {
					return src, true
				}
			}
		}
	}
	return upstreamSource{}, false
}

// desiredUpstream returns the upstream copy of a downstream
// PersistentVolume: its spec, labels and annotations, bound to the claim
// of the workspace (namespace/claim there), the SyncTarget's state label
// being set by the upsyncer virtual workspace, and the hash of what it
// holds in AppliedAnnotation. Its status is written apart.
func desiredUpstream(down *unstructured.Unstructured, namespace, claim string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range down.Object {
		if k != "metadata" && k != "status" {
			u.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	u.SetName(down.GetName())
	u.SetLabels(down.GetLabels())
	ref := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim}
	if err := unstructured.SetNestedMap(u.Object, ref, "spec", "claimRef"); err != nil {
		return nil, err
	}
	annotations := map[string]string{}
	for k, v := range down.GetAnnotations() {
		annotations[k] = v
	}
	delete(annotations, AppliedAnnotation)
	u.SetAnnotations(annotations)
	b, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	annotations[AppliedAnnotation] = hex.EncodeToString(sum[:12])
	u.SetAnnotations(annotations)
	return u, nil
}

// isUpsynced tells whether a synced resource goes up.
func isUpsynced(r workloadv1alpha1.ResourceToSync) bool {
	return r.Group == "" && upsynced[r.Resource]
}
