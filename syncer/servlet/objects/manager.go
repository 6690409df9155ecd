package objects

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
	"github.com/tessera-dev/tessera/syncer/servlet/publisher"
)

// Manager runs one Engine per published resource, replacing it when the
// PublishedResource, its CRD or the Service's API group changes.
type Manager struct {
	platform *rest.Config
	kcp      *kcpclient.Clientset
	service  dynamic.Interface
	kube     kubernetes.Interface
	workers  int

	mu      sync.Mutex
	ctx     context.Context
	running map[string]*runningEngine // by PublishedResource name
}

type runningEngine struct {
	fingerprint string
	cancel      context.CancelFunc
	done        chan struct{}
}

// NewManager returns a Manager that reaches the platform workspace of the
// Service with platform and the service cluster with service.
func NewManager(platform, service *rest.Config, workers int) (*Manager, error) {
	kcp, err := kcpclient.NewForConfig(platform)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(service)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(service)
	if err != nil {
		return nil, err
	}
	return &Manager{platform: platform, kcp: kcp, service: dyn, kube: kube, workers: max(workers, 1), running: map[string]*runningEngine{}}, nil
}

// Start sets the context the engines run in; they stop with it. Call it
// before Sync.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctx = ctx
}

// Stop stops every engine and waits for them.
func (m *Manager) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, r := range m.running {
		r.cancel()
		<-r.done
		delete(m.running, name)
	}
}

// Sync makes the running engines those of list, in the Service's API
// group apiGroup; it is publisher.Publisher's OnPublished.
func (m *Manager) Sync(ctx context.Context, apiGroup string, list []publisher.Published) error {
	endpoints, err := m.endpoints(ctx, apiGroup)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx == nil {
		return fmt.Errorf("the engine manager was not started")
	}
	want := map[string]bool{}
	for _, p := range list {
		name := p.PublishedResource.Name
		want[name] = true
		target, err := TargetOf(p, apiGroup)
		if err != nil {
			return err
		}
		fp, err := json.Marshal([]any{p.PublishedResource.Spec, p.CRD.Spec, apiGroup, endpoints})
		if err != nil {
			return err
		}
		if r, ok := m.running[name]; ok {
			if r.fingerprint == string(fp) {
				continue
			}
			r.cancel()
			<-r.done
			delete(m.running, name)
		}
		e, err := NewEngine(target, m.platform, endpoints, m.service, m.kube, m.workers)
		if err != nil {
			return fmt.Errorf("PublishedResource %s: %w", name, err)
		}
		ctx, cancel := context.WithCancel(m.ctx)
		r := &runningEngine{fingerprint: string(fp), cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(r.done)
			e.Run(ctx)
		}()
		m.running[name] = r
	}
	for name, r := range m.running {
		if !want[name] {
			klog.FromContext(ctx).Info("Stopping the sync of a published resource", "publishedResource", name)
			r.cancel()
			<-r.done
			delete(m.running, name)
		}
	}
	return nil
}

// TargetOf returns what the engine of p syncs.
func TargetOf(p publisher.Published, apiGroup string) (Target, error) {
	pr, crd := p.PublishedResource, p.CRD
	projected, err := published.Project(crd, pr, apiGroup)
	if err != nil {
		return Target{}, err
	}
	src := pr.Spec.Resource
	return Target{
		PublishedResource: pr,
		Remote:            crdGVR(projected, projected.Spec.Versions[0].Name),
		Local:             crdGVR(crd, src.Version),
		LocalKind:         crd.Spec.Names.Kind,
		LocalNamespaced:   crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		Status:            published.HasStatusSubresource(crd, src.Version),
	}, nil
}

// endpoints returns the URLs of the apiexport virtual workspace of the
// Service's export, from the APIExportEndpointSlice named after it in the
// Service's workspace, which it creates if missing.
func (m *Manager) endpoints(ctx context.Context, apiGroup string) ([]string, error) {
	slices := m.kcp.APIExportEndpointSlices()
	slice, err := slices.Get(ctx, apiGroup, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		slice, err = slices.Create(ctx, &apisv1alpha1.APIExportEndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: apiGroup},
			Spec:       apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Name: apiGroup}},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("APIExportEndpointSlice %s: %w", apiGroup, err)
	}
	var urls []string
	for _, e := range slice.Status.APIExportEndpoints {
		urls = append(urls, e.URL)
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("APIExportEndpointSlice %s has no endpoints yet", apiGroup)
	}
	return urls, nil
}
