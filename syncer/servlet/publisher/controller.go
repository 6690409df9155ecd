// Package publisher is the servlet's schema publisher: it turns each valid
// PublishedResource of the service cluster into an APIResourceSchema in the
// Service's platform workspace (projected names, the Service's API group)
// and keeps the Service's APIExport, named after its API group, listing
// exactly those schemas. A changed CRD or projection gives a new schema
// name; a deleted PublishedResource leaves the export. Old schemas stay
// (they are immutable and may still be bound).
//
// It watches PublishedResources and CRDs of the service cluster and the
// Service in the platform workspace, one informer each, and reconciles
// them together under one queue key.
package publisher

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	kdpcorev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/kdpcore/v1alpha1"
	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/syncer/servlet/crds"
)

// Resources of the servlet's own APIs.
var (
	PublishedResourcesGVR = servicesv1alpha1.SchemeGroupVersion.WithResource("publishedresources")
	ServicesGVR           = kdpcorev1alpha1.SchemeGroupVersion.WithResource("services")
)

// Publisher publishes the PublishedResources of a service cluster into the
// workspace of a Service.
type Publisher struct {
	serviceCRDs  apiextensionsclient.Interface
	platformCRDs apiextensionsclient.Interface
	controller   *reconciler.Controller
	publishing   *publishing
	published    cache.SharedIndexInformer
	service      cache.SharedIndexInformer
	crdFactory   apiextensionsinformers.SharedInformerFactory
}

// New returns a Publisher of the PublishedResources of the service cluster
// reached by service into the platform workspace reached by platform
// (a /clusters/<path> URL), for the Service named serviceName there.
func New(service, platform *rest.Config, serviceName string) (*Publisher, error) {
	serviceDynamic, err := dynamic.NewForConfig(service)
	if err != nil {
		return nil, err
	}
	serviceCRDs, err := apiextensionsclient.NewForConfig(service)
	if err != nil {
		return nil, err
	}
	platformDynamic, err := dynamic.NewForConfig(platform)
	if err != nil {
		return nil, err
	}
	platformCRDs, err := apiextensionsclient.NewForConfig(platform)
	if err != nil {
		return nil, err
	}
	kcp, err := kcpclient.NewForConfig(platform)
	if err != nil {
		return nil, err
	}

	p := &Publisher{
		serviceCRDs:  serviceCRDs,
		platformCRDs: platformCRDs,
		published:    dynamicinformer.NewFilteredDynamicInformer(serviceDynamic, PublishedResourcesGVR, "", 0, cache.Indexers{}, nil).Informer(),
		service: dynamicinformer.NewFilteredDynamicInformer(platformDynamic, ServicesGVR, "", 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", serviceName).String()
		}).Informer(),
		crdFactory: apiextensionsinformers.NewSharedInformerFactory(serviceCRDs, 0),
	}
	crdLister := p.crdFactory.Apiextensions().V1().CustomResourceDefinitions().Lister()
	r := &publishing{
		apiGroup: func(ctx context.Context) (string, error) {
			obj, ok, err := p.service.GetStore().GetByKey(serviceName)
			if err != nil {
				return "", err
			}
			if !ok {
				return "", fmt.Errorf("Service %s not found in the platform workspace", serviceName)
			}
			u := obj.(*unstructured.Unstructured)
			s := &kdpcorev1alpha1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
				return "", err
			}
			if s.Spec.APIGroup == "" {
				return "", fmt.Errorf("Service %s has no spec.apiGroup", serviceName)
			}
			return s.Spec.APIGroup, nil
		},
		listPublished: func() ([]*servicesv1alpha1.PublishedResource, error) {
			var out []*servicesv1alpha1.PublishedResource
			for _, obj := range p.published.GetStore().List() {
				pr, err := ToPublishedResource(obj.(*unstructured.Unstructured))
				if err != nil {
					return nil, err
				}
				out = append(out, pr)
			}
			return out, nil
		},
		listCRDs: func() ([]*apiextensionsv1.CustomResourceDefinition, error) {
			return crdLister.List(labels.Everything())
		},
		ensureSchema: func(ctx context.Context, s *apisv1alpha1.APIResourceSchema) error {
			_, err := kcp.APIResourceSchemas().Create(ctx, s, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		ensureExport: func(ctx context.Context, name string, schemas []string, claims []apisv1alpha1.PermissionClaim) error {
			return ensureExport(ctx, kcp.APIExports(), name, schemas, claims)
		},
		updateStatus: func(ctx context.Context, pr *servicesv1alpha1.PublishedResource) error {
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pr)
			if err != nil {
				return err
			}
			_, err = serviceDynamic.Resource(PublishedResourcesGVR).UpdateStatus(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{})
			return err
		},
	}
	p.publishing = r
	p.controller = reconciler.New("servlet-publisher", reconciler.Func(func(ctx context.Context, _ reconciler.Key) (reconciler.Result, error) {
		return reconciler.Result{}, r.reconcile(ctx)
	}), reconciler.Options{Workers: 1})
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.controller.Enqueue(reconciler.Key{}) },
		UpdateFunc: func(any, any) { p.controller.Enqueue(reconciler.Key{}) },
		DeleteFunc: func(any) { p.controller.Enqueue(reconciler.Key{}) },
	}
	if err := p.controller.Watch(p.published, enqueue); err != nil {
		return nil, err
	}
	if err := p.controller.Watch(p.crdFactory.Apiextensions().V1().CustomResourceDefinitions().Informer(), enqueue); err != nil {
		return nil, err
	}
	if err := p.controller.Watch(p.service, enqueue); err != nil {
		return nil, err
	}
	return p, nil
}

// OnPublished makes fn be told, after each pass that updated the export,
// what is published; an error of fn retries the pass. Call it before Run.
func (p *Publisher) OnPublished(fn func(ctx context.Context, apiGroup string, published []Published) error) {
	p.publishing.onPublished = fn
}

// Run applies the PublishedResource CRD on the service cluster and the
// Service CRD in the platform workspace, then publishes until ctx is done.
func (p *Publisher) Run(ctx context.Context) error {
	if err := crds.Ensure(ctx, p.serviceCRDs.ApiextensionsV1(), crds.PublishedResourceFile); err != nil {
		return fmt.Errorf("on the service cluster: %w", err)
	}
	if err := crds.Ensure(ctx, p.platformCRDs.ApiextensionsV1(), crds.ServiceFile); err != nil {
		return fmt.Errorf("in the platform workspace: %w", err)
	}
	go p.published.RunWithContext(ctx)
	go p.service.RunWithContext(ctx)
	p.crdFactory.Start(ctx.Done())
	defer p.crdFactory.Shutdown()
	p.controller.Enqueue(reconciler.Key{})
	return p.controller.Run(ctx)
}

// ToPublishedResource converts an unstructured PublishedResource.
func ToPublishedResource(u *unstructured.Unstructured) (*servicesv1alpha1.PublishedResource, error) {
	pr := &servicesv1alpha1.PublishedResource{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pr); err != nil {
		return nil, fmt.Errorf("decoding PublishedResource %s: %w", u.GetName(), err)
	}
	return pr, nil
}
