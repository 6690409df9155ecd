package objects

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

// objectSync reconciles one remote object with its local copy.
type objectSync struct {
	target  Target
	engine  *Engine
	local   dynamic.NamespaceableResourceInterface
	service dynamic.Interface
	kube    kubernetes.Interface
	// namespaces are the service cluster's namespaces the servlet made
	// or found, not to be created again for every object.
	namespaces sync.Map
	// copies holds the resourceVersion of each related copy as last
	// written or checked, by relatedIndexKey: a copy changed by someone
	// else is made again.
	copies sync.Map
}

func (s *objectSync) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	r := published.Remote{Cluster: key.Cluster.String(), Namespace: key.Namespace, Name: key.Name}
	// Phase 1: find the local object by its labels.
	locals, err := s.engine.localCopies(r)
	if err != nil {
		return reconciler.Result{}, err
	}
	remote, src, err := s.engine.remoteObject(key)
	if err != nil {
		return reconciler.Result{}, err
	}
	// Phase 2: deletion. A remote object gone, being deleted or no longer
	// selected loses its local copies, then the finalizer.
	if remote == nil {
		// The platform side's copies went with the platform object's
		// workspace or were never made; only local ones are left.
		for _, l := range locals {
			if err := s.deleteRelatedCopies(ctx, nil, l, nil); err != nil {
				return reconciler.Result{}, err
			}
		}
		return reconciler.Result{}, s.deleteLocals(ctx, locals)
	}
	remoteClient := src.clients.Cluster(key.Cluster).Resource(s.target.Remote).Namespace(key.Namespace)
	if !remote.GetDeletionTimestamp().IsZero() || !s.selected(remote) {
		if !slices.Contains(remote.GetFinalizers(), Finalizer) {
			return reconciler.Result{}, nil
		}
		if len(locals) > 0 {
			for _, l := range locals {
				if err := s.deleteRelatedCopies(ctx, remote, l, src.clients.Cluster(key.Cluster)); err != nil {
					return reconciler.Result{}, err
				}
			}
			return reconciler.Result{}, s.deleteLocals(ctx, locals)
		}
		return reconciler.Result{}, s.removeFinalizer(ctx, remoteClient, remote)
	}

	// Phase 3: ensure the local object exists (finalizer first, so that no
	// copy is ever made without it).
	if !slices.Contains(remote.GetFinalizers(), Finalizer) {
		remote = remote.DeepCopy()
		remote.SetFinalizers(append(remote.GetFinalizers(), Finalizer))
		if remote, err = remoteClient.Update(ctx, remote, metav1.UpdateOptions{}); err != nil {
			return reconciler.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	var local *unstructured.Unstructured
	if len(locals) > 0 {
		local = locals[0]
	} else if local, err = s.ensureLocal(ctx, remote, r); err != nil || local == nil {
		return reconciler.Result{}, err
	}

	// Phase 4: content down, status up.
	patch, err := ContentPatch(remote, local)
	if err != nil {
		return reconciler.Result{}, reconciler.TerminalError(err)
	}
	if patch != nil {
		if local, err = s.local.Namespace(local.GetNamespace()).Patch(ctx, local.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return reconciler.Result{}, fmt.Errorf("patching the local object: %w", err)
		}
	}
	if s.target.Status {
		status, hasStatus := local.Object["status"]
		if hasStatus && !equality.Semantic.DeepEqual(status, remote.Object["status"]) {
			up := remote.DeepCopy()
			up.Object["status"] = status
			if _, err := remoteClient.UpdateStatus(ctx, up, metav1.UpdateOptions{}); err != nil {
				return reconciler.Result{}, fmt.Errorf("copying the status up: %w", err)
			}
		}
	}

	// Phase 5: related objects, both ways. One not there yet, or not
	// named yet, is copied on the event that brings it.
	if len(s.target.PublishedResource.Spec.Related) == 0 {
		return reconciler.Result{}, nil
	}
	return reconciler.Result{}, s.syncRelated(ctx, remote, local, src)
}

// selected tells whether the PublishedResource's filter selects remote.
func (s *objectSync) selected(remote *unstructured.Unstructured) bool {
	f := s.target.PublishedResource.Spec.Filter
	if f == nil {
		return true
	}
	if f.Namespace != "" && remote.GetNamespace() != f.Namespace {
		return false
	}
	if f.Resource != nil {
		sel, err := metav1.LabelSelectorAsSelector(f.Resource)
		return err == nil && sel.Matches(labels.Set(remote.GetLabels()))
	}
	return true
}

// ensureLocal creates the local copy of remote, in a namespace it creates
// if needed. When the name is taken, it adopts the object if it is the
// copy of remote whose labels were mangled (its remote-name annotation
// names remote), and otherwise reports the collision and leaves it alone
// (nil, nil).
func (s *objectSync) ensureLocal(ctx context.Context, remote *unstructured.Unstructured, r published.Remote) (*unstructured.Unstructured, error) {
	logger := klog.FromContext(ctx)
	namespace, name := published.LocalName(s.target.PublishedResource.Spec.Naming, r, s.target.LocalNamespaced)
	if _, known := s.namespaces.Load(namespace); namespace != "" && !known {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
		if _, err := s.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating namespace %s: %w", namespace, err)
		}
		s.namespaces.Store(namespace, struct{}{})
	}
	want, err := NewLocal(remote, s.target.Local.GroupVersion().String(), s.target.LocalKind, namespace, name, RemoteLabels(r))
	if err != nil {
		return nil, reconciler.TerminalError(err)
	}
	created, err := s.local.Namespace(namespace).Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		// The namespace went since the servlet made or saw it.
		s.namespaces.Delete(namespace)
	}
	if err == nil {
		logger.V(2).Info("Created local object", "local", klog.KObj(created))
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating the local object %s/%s: %w", namespace, name, err)
	}
	existing, err := s.local.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if owner, ok := RemoteOf(existing.GetLabels(), existing.GetAnnotations()); ok && owner == r {
		return existing, nil // the informer has not seen it yet
	}
	if existing.GetAnnotations()[AnnotationRemoteName] != r.Name {
		s.reportCollision(ctx, existing, r)
		return nil, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": RemoteLabels(r)}})
	if err != nil {
		return nil, err
	}
	adopted, err := s.local.Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("adopting the local object %s/%s: %w", namespace, name, err)
	}
	logger.Info("Adopted local object", "local", klog.KObj(adopted))
	return adopted, nil
}

// reportCollision records an Event on the service cluster about the local
// object that holds the name the remote object's copy needs.
func (s *objectSync) reportCollision(ctx context.Context, existing *unstructured.Unstructured, r published.Remote) {
	msg := fmt.Sprintf("the copy of %s/%s of logical cluster %s would be named %s, which %s already uses; it is not synced",
		r.Namespace, r.Name, r.Cluster, existing.GetName(), describe(existing))
	klog.FromContext(ctx).Info("Local name collision", "local", klog.KObj(existing), "remoteCluster", r.Cluster, "remoteNamespace", r.Namespace, "remoteName", r.Name)
	namespace := existing.GetNamespace()
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: existing.GetName() + ".", Namespace: namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: existing.GetAPIVersion(), Kind: existing.GetKind(), Namespace: existing.GetNamespace(),
			Name: existing.GetName(), UID: existing.GetUID(),
		},
		Reason: "NameCollision", Message: msg, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "tessera-servlet"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := s.kube.CoreV1().Events(namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot record a name collision")
	}
}

func describe(u *unstructured.Unstructured) string {
	if r, ok := RemoteOf(u.GetLabels(), u.GetAnnotations()); ok {
		return fmt.Sprintf("the copy of %s/%s of logical cluster %s", r.Namespace, r.Name, r.Cluster)
	}
	return "an object the servlet did not make"
}

func (s *objectSync) deleteLocals(ctx context.Context, locals []*unstructured.Unstructured) error {
	for _, l := range locals {
		if !l.GetDeletionTimestamp().IsZero() {
			continue
		}
		err := s.local.Namespace(l.GetNamespace()).Delete(ctx, l.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptrUID(l.GetUID())}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the local object %s/%s: %w", l.GetNamespace(), l.GetName(), err)
		}
	}
	return nil
}

func (s *objectSync) removeFinalizer(ctx context.Context, client dynamic.ResourceInterface, remote *unstructured.Unstructured) error {
	remote = remote.DeepCopy()
	remote.SetFinalizers(slices.DeleteFunc(remote.GetFinalizers(), func(f string) bool { return f == Finalizer }))
	if _, err := client.Update(ctx, remote, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the finalizer: %w", err)
	}
	return nil
}

func ptrUID(u types.UID) *types.UID { return &u }
