package objects

import (
	"context"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

// relatedContent are the fields of related objects that are copied.
var relatedContent = []string{"data", "binaryData", "stringData", "type", "immutable"}

// syncRelated copies each related object of the pair (remote, local) from
// its origin to the other side, by the names its reference evaluates to
// on each side. One not there or not named yet is skipped, and so is one
// whose copy was made from the original as the caches have it now.
func (s *objectSync) syncRelated(ctx context.Context, remote, local *unstructured.Unstructured, src *remoteSource) error {
	cluster := logicalcluster.From(remote)
	remoteClients := src.clients.Cluster(cluster)
	var failed, refused []error
	for _, rel := range s.target.PublishedResource.Spec.Related {
		gvr := published.RelatedResources[rel.Kind]
		remoteNS, remoteName, err := published.RelatedName(remote, rel.Reference)
		if err != nil {
			return fmt.Errorf("related %s in the platform: %w", rel.Identifier, err)
		}
		localNS, localName, err := published.RelatedName(local, rel.Reference)
		if err != nil {
			return fmt.Errorf("related %s on the service cluster: %w", rel.Identifier, err)
		}
		if remoteName == "" || localName == "" {
			continue
		}
		localCached, localKnown := cachedMeta(s.engine.relatedLocal[rel.Kind], localStoreKey(localNS, localName))
		remoteCached, remoteKnown := cachedMeta(src.related[rel.Kind], reconciler.Key{Cluster: cluster, Namespace: remoteNS, Name: remoteName}.String())
		from, to := s.service.Resource(gvr).Namespace(localNS), remoteClients.Resource(gvr).Namespace(remoteNS)
		fromName, toName, toNS := localName, remoteName, remoteNS
		fromCached, fromKnown, toCached, toKnown := localCached, localKnown, remoteCached, remoteKnown
		if rel.Origin == servicesv1alpha1.RelatedResourceOriginPlatform {
			from, to = remoteClients.Resource(gvr).Namespace(remoteNS), s.service.Resource(gvr).Namespace(localNS)
			fromName, toName, toNS = remoteName, localName, localNS
			fromCached, fromKnown, toCached, toKnown = remoteCached, remoteKnown, localCached, localKnown
		}
		if fromKnown && fromCached == nil {
			continue // not made yet: its event brings it
		}
		toKey := relatedIndexKey(rel.Kind, "", toNS, toName)
		if rel.Origin != servicesv1alpha1.RelatedResourceOriginPlatform {
			toKey = relatedIndexKey(rel.Kind, cluster.String(), toNS, toName)
		}
		if fromKnown && toKnown && toCached != nil && toCached.GetAnnotations()[AnnotationRelatedSource] == fromCached.GetResourceVersion() &&
			s.written(toKey) == toCached.GetResourceVersion() {
			continue // the copy is current, as the servlet last wrote it
		}
		original, err := from.Get(ctx, fromName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading related %s %s: %w", rel.Identifier, fromName, err)
		}
		rv, err := copyRelated(ctx, original, to, toNS, toName, rel.Identifier)
		if err == nil {
			s.copies.Store(toKey, rv)
		} else {
			// The others are still copied.
			err = fmt.Errorf("copying related %s to %s/%s: %w", rel.Identifier, toNS, toName, err)
			if reconciler.IsTerminal(err) {
				refused = append(refused, err)
			} else {
				failed = append(failed, err)
			}
		}
	}
	if len(failed) > 0 {
		return utilerrors.NewAggregate(append(failed, refused...))
	}
	if len(refused) > 0 {
		return reconciler.TerminalError(utilerrors.NewAggregate(refused))
	}
	return nil
}

// copyRelated creates or updates the copy of src named name, with src's
// content, labels and annotations (less the logical cluster's), marked
// with AnnotationRelated and the resourceVersion of src. An object of that
// name the servlet did not make is not overwritten: that is a terminal
// error until the next event. It returns the copy's resourceVersion.
func copyRelated(ctx context.Context, src *unstructured.Unstructured, to dynamic.ResourceInterface, namespace, name, identifier string) (string, error) {
	want := &unstructured.Unstructured{Object: map[string]any{"apiVersion": src.GetAPIVersion(), "kind": src.GetKind()}}
	for _, f := range relatedContent {
		if v, ok := src.Object[f]; ok {
			want.Object[f] = v
		}
	}
	want = want.DeepCopy()
	want.SetNamespace(namespace)
	want.SetName(name)
	want.SetLabels(src.GetLabels())
	annotations := maps.Clone(src.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, logicalcluster.AnnotationKey)
	annotations[AnnotationRelated] = identifier
	annotations[AnnotationRelatedSource] = src.GetResourceVersion()
	want.SetAnnotations(annotations)

	have, err := to.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		created, err := to.Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		return created.GetResourceVersion(), nil
	}
	if err != nil {
		return "", err
	}
	if _, ours := have.GetAnnotations()[AnnotationRelated]; !ours {
		return "", reconciler.TerminalError(fmt.Errorf("%s/%s exists and was not made by the servlet: not overwritten", namespace, name))
	}
	same := have.GetAnnotations()[AnnotationRelatedSource] == src.GetResourceVersion()
	for _, f := range relatedContent {
		if !equality.Semantic.DeepEqual(have.Object[f], want.Object[f]) {
			same = false
		}
	}
	if same {
		return have.GetResourceVersion(), nil
	}
	updated := have.DeepCopy()
	for _, f := range relatedContent {
		if v, ok := want.Object[f]; ok {
			updated.Object[f] = v
		} else {
			delete(updated.Object, f)
		}
	}
	updated.SetLabels(want.GetLabels())
	updated.SetAnnotations(want.GetAnnotations())
	updated, err = to.Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return "", err
	}
	return updated.GetResourceVersion(), nil
}

// written returns the resourceVersion of the related copy of key (a
// relatedIndexKey) as the servlet last wrote or checked it, empty if it
// has not since it started.
func (s *objectSync) written(key string) string {
	rv, _ := s.copies.Load(key)
	v, _ := rv.(string)
	return v
}

// deleteRelatedCopies deletes the copies the servlet made of the related
// objects of the pair (remote, local), on the side opposite each origin:
// in the platform with remote and remoteClients, on the service cluster
// with local. A nil remote skips the platform side. Objects the servlet
// did not make (without AnnotationRelated of the identifier) stay.
func (s *objectSync) deleteRelatedCopies(ctx context.Context, remote, local *unstructured.Unstructured, remoteClients dynamic.Interface) error {
	for _, rel := range s.target.PublishedResource.Spec.Related {
		gvr := published.RelatedResources[rel.Kind]
		side, client := local, dynamic.Interface(s.service)
		if rel.Origin != servicesv1alpha1.RelatedResourceOriginPlatform {
			side, client = remote, remoteClients
		}
		if side == nil {
			continue
		}
		namespace, name, err := published.RelatedName(side, rel.Reference)
		if err != nil || name == "" {
			continue
		}
		to := client.Resource(gvr).Namespace(namespace)
		have, err := to.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the copy of related %s %s/%s: %w", rel.Identifier, namespace, name, err)
		}
		if have.GetAnnotations()[AnnotationRelated] != rel.Identifier {
			continue
		}
		if rel.Origin == servicesv1alpha1.RelatedResourceOriginPlatform {
			s.copies.Delete(relatedIndexKey(rel.Kind, "", namespace, name))
		} else {
			s.copies.Delete(relatedIndexKey(rel.Kind, logicalcluster.From(remote).String(), namespace, name))
		}
		uid := have.GetUID()
		err = to.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the copy of related %s %s/%s: %w", rel.Identifier, namespace, name, err)
		}
	}
	return nil
}
