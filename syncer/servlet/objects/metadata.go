package objects

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

// The metadata the servlet keeps on local objects (the service cluster's
// copies) to remember which platform object each one copies. The platform
// side carries only Finalizer.
const (
	// LabelRemoteCluster is the logical cluster of the platform object.
	LabelRemoteCluster = "servlet.kdp.k8c.io/remote-object-cluster"
	// LabelRemoteNamespace is the platform object's namespace (absent for
	// cluster-scoped objects).
	LabelRemoteNamespace = "servlet.kdp.k8c.io/remote-object-namespace"
	// LabelRemoteNameHash is published.Hash of the platform object's name
	// (names may be longer than a label value).
	LabelRemoteNameHash = "servlet.kdp.k8c.io/remote-object-name-hash"
	// AnnotationRemoteName is the platform object's name.
	AnnotationRemoteName = "servlet.kdp.k8c.io/remote-object-name"
	// AnnotationLastKnownState is the content last copied from the platform
	// object, the base of three-way merges (like kubectl's
	// last-applied-configuration).
	AnnotationLastKnownState = "servlet.kdp.k8c.io/last-known-state"
	// AnnotationRelated marks a copy of a related object with the
	// identifier of its related resource; an object without it is never
	// overwritten.
	AnnotationRelated = "servlet.kdp.k8c.io/related"
	// AnnotationRelatedSource is the resourceVersion of the original a
	// related copy was last made from.
	AnnotationRelatedSource = "servlet.kdp.k8c.io/related-source-version"
	// Finalizer holds a platform object until its local copy is gone.
	Finalizer = "servlet.kdp.k8c.io/cleanup"
)

// RemoteLabels returns the labels that tie a local object to r.
func RemoteLabels(r published.Remote) map[string]string {
	l := map[string]string{
		LabelRemoteCluster:  r.Cluster,
		LabelRemoteNameHash: published.Hash(r.Name),
	}
	if r.Namespace != "" {
		l[LabelRemoteNamespace] = r.Namespace
	}
	return l
}

// RemoteSelector selects the local objects of r.
func RemoteSelector(r published.Remote) labels.Selector {
	sel := labels.SelectorFromSet(RemoteLabels(r))
	if r.Namespace == "" {
		req, _ := labels.NewRequirement(LabelRemoteNamespace, selection.DoesNotExist, nil)
		sel = sel.Add(*req)
	}
	return sel
}

// RemoteOf returns the platform object a local object copies, from its
// labels and annotation, and whether it has them.
func RemoteOf(lbls, annotations map[string]string) (published.Remote, bool) {
	cluster, name := lbls[LabelRemoteCluster], annotations[AnnotationRemoteName]
	if !logicalcluster.Name(cluster).IsValid() || name == "" || lbls[LabelRemoteNameHash] != published.Hash(name) {
		return published.Remote{}, false
	}
	return published.Remote{Cluster: cluster, Namespace: lbls[LabelRemoteNamespace], Name: name}, true
}
