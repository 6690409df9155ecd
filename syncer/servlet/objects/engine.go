// Package objects is the servlet's sync loop: for each published resource,
// objects that consumers create in workspaces binding the Service's
// APIExport are read through the export's virtual workspace, copied to the
// service cluster under the PublishedResource's naming, kept in line with
// a three-way content merge, and their status is copied back up. It
// follows the seed's phases: find the local object by labels, handle
// deletion (a finalizer on the platform object), ensure the local object
// (namespace, create, adopt after mangled labels, report a collision and
// never overwrite), sync content, sync status, then related Secrets and
// ConfigMaps both ways, named by the reference evaluated on each side (the
// Service's APIExport claims secrets and configmaps, so consumers must
// accept those claims in their APIBinding).
//
// Related objects are watched on both sides, metadata only: one informer
// per related kind on the service cluster and one per kind and endpoint in
// the platform. When the main object goes, the copies of its related
// objects the servlet made go with it.
//
// One Engine per published resource: one wildcard informer per virtual
// workspace endpoint (one per shard), one informer of the local copies,
// and the related informers; nothing is started per workspace or per
// object.
package objects

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

// Target is what an Engine syncs: a published resource on both sides.
type Target struct {
	// PublishedResource says how (filter, naming).
	PublishedResource *servicesv1alpha1.PublishedResource
	// Remote is the projected resource in the platform.
	Remote schema.GroupVersionResource
	// Local is the CRD's resource, Kind its kind, on the service cluster.
	Local     schema.GroupVersionResource
	LocalKind string
	// LocalNamespaced tells whether local copies have a namespace.
	LocalNamespaced bool
	// Status tells whether the CRD has a status subresource, whose
	// content is copied back up.
	Status bool
}

// remoteSource is one virtual workspace endpoint: a wildcard informer of
// the remote resource and per-cluster clients for writes.
type remoteSource struct {
	clients  *clusters.DynamicClusterClient
	informer cache.SharedIndexInformer
	// related are the informers of related objects at this endpoint, by
	// kind.
	related map[string]cache.SharedIndexInformer
}

// Engine syncs the objects of one published resource.
type Engine struct {
	target Target
	remote []remoteSource
	local  cache.SharedIndexInformer
	// related are the informers of related objects, both sides;
	// relatedLocal those of the service cluster, by kind.
	related      []cache.SharedIndexInformer
	relatedLocal map[string]cache.SharedIndexInformer
	ctrl         *reconciler.Controller
	r            *objectSync
}

const indexRemote = "remote"

// NewEngine returns an Engine of target, reading remote objects at the
// virtual workspace endpoints (URLs without /clusters/*) with platform's
// credentials and writing local copies with service.
func NewEngine(target Target, platform *rest.Config, endpoints []string, service dynamic.Interface, kube kubernetes.Interface, workers int) (*Engine, error) {
	e := &Engine{target: target}
	for _, url := range endpoints {
		cfg := rest.CopyConfig(platform)
		cfg.Host, cfg.APIPath = url, ""
		clients, err := clusters.NewDynamicForConfig(cfg)
		if err != nil {
			return nil, err
		}
		// Not filtered by the PublishedResource's label selector: an object
		// that leaves the selection must still lose its copy and finalizer.
		lw := informers.NoWatchList(&listWatch{client: clients.Wildcard().Resource(target.Remote)})
		informer := informers.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, informers.ClusterIndexers())
		if err := informer.SetTransform(informers.StripManagedFields); err != nil {
			return nil, err
		}
		e.remote = append(e.remote, remoteSource{clients: clients, informer: informer})
	}
	e.local = dynamicinformer.NewFilteredDynamicInformer(service, target.Local, metav1.NamespaceAll, 0,
		cache.Indexers{indexRemote: remoteIndex}, func(o *metav1.ListOptions) { o.LabelSelector = LabelRemoteCluster }).Informer()
	if err := e.local.SetTransform(informers.StripManagedFields); err != nil {
		return nil, err
	}
	e.r = &objectSync{target: target, engine: e, local: service.Resource(target.Local), service: service, kube: kube}
	e.ctrl = reconciler.New("servlet-"+target.Remote.Resource, reconciler.Func(e.r.reconcile), reconciler.Options{Workers: workers})
	for _, src := range e.remote {
		if err := e.ctrl.Watch(src.informer, e.ctrl.EnqueueHandler()); err != nil {
			return nil, err
		}
	}
	if err := e.ctrl.Watch(e.local, reconciler.EnqueueMappedHandler(e.ctrl, remoteKeyOf)); err != nil {
		return nil, err
	}
	if err := e.watchRelated(service); err != nil {
		return nil, err
	}
	return e, nil
}

// Run syncs until ctx is done. Once both sides are listed, every local copy
// is looked at, so one whose remote object went while the servlet was
// away is deleted.
func (e *Engine) Run(ctx context.Context) {
	for _, src := range e.remote {
		go src.informer.RunWithContext(ctx)
	}
	go e.local.RunWithContext(ctx)
	for _, inf := range e.related {
		go inf.RunWithContext(ctx)
	}
	go func() {
		syncs := []cache.InformerSynced{e.local.HasSynced}
		for _, src := range e.remote {
			syncs = append(syncs, src.informer.HasSynced)
		}
		if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
			return
		}
		for _, obj := range e.local.GetStore().List() {
			for _, key := range remoteKeyOf(obj.(*unstructured.Unstructured)) {
				e.ctrl.Enqueue(key)
			}
		}
	}()
	klog.FromContext(ctx).Info("Syncing published resource", "remote", e.target.Remote, "local", e.target.Local)
	if err := e.ctrl.Run(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Syncing stopped", "remote", e.target.Remote)
	}
}

// remoteKeyOf maps a local copy to the key of its remote object.
func remoteKeyOf(u *unstructured.Unstructured) []reconciler.Key {
	r, ok := RemoteOf(u.GetLabels(), u.GetAnnotations())
	if !ok {
		return nil
	}
	return []reconciler.Key{{Cluster: logicalcluster.Name(r.Cluster), Namespace: r.Namespace, Name: r.Name}}
}

// remoteIndex indexes local copies by their remote object.
func remoteIndex(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	lbls := u.GetLabels()
	if lbls[LabelRemoteCluster] == "" {
		return nil, nil
	}
	return []string{remoteIndexKey(lbls[LabelRemoteCluster], lbls[LabelRemoteNamespace], lbls[LabelRemoteNameHash])}, nil
}

func remoteIndexKey(cluster, namespace, nameHash string) string {
	return cluster + "|" + namespace + "|" + nameHash
}

// localCopies returns the local copies of r, found by their labels.
func (e *Engine) localCopies(r published.Remote) ([]*unstructured.Unstructured, error) {
	objs, err := e.local.GetIndexer().ByIndex(indexRemote, remoteIndexKey(r.Cluster, r.Namespace, published.Hash(r.Name)))
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*unstructured.Unstructured))
	}
	return out, nil
}

// remoteObject returns the remote object of key and the source that holds
// it, or nil if no endpoint has it.
func (e *Engine) remoteObject(key reconciler.Key) (*unstructured.Unstructured, *remoteSource, error) {
	for i := range e.remote {
		obj, ok, err := e.remote[i].informer.GetStore().GetByKey(key.String())
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return obj.(*unstructured.Unstructured), &e.remote[i], nil
		}
	}
	return nil, nil, nil
}

// listWatch lists and watches through a dynamic resource client.
type listWatch struct{ client dynamic.ResourceInterface }

func (l *listWatch) List(lo metav1.ListOptions) (runtime.Object, error) {
	return l.client.List(context.Background(), lo)
}

func (l *listWatch) Watch(lo metav1.ListOptions) (watch.Interface, error) {
	return l.client.Watch(context.Background(), lo)
}

// crdGVR returns the resource of a CRD at version.
func crdGVR(crd *apiextensionsv1.CustomResourceDefinition, version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
}
