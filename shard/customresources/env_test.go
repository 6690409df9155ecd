package customresources

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/etcd/etcdtest"
	"github.com/tessera-dev/tessera/shard/filters"
	"github.com/tessera-dev/tessera/shard/storage"
)

// startEtcd starts an embedded etcd for the test and returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	return etcdtest.Start(t)
}

// backend returns the storage configuration of the test etcd.
func backend(url string) storagebackend.Config {
	b := storagebackend.NewDefaultConfig("/registry", nil)
	b.Transport.ServerList = []string{url}
	return *b
}

// storages are the storage setups the handler tests run on: the
// cluster-aware etcd stores of shard/storage, and the same with one watch
// cache per group/resource shared by all clusters (as the shard runs).
func storages(*testing.T) map[string]func(t *testing.T, url string) generic.StorageDecorator {
	return map[string]func(t *testing.T, url string) generic.StorageDecorator{
		"etcd": func(*testing.T, string) generic.StorageDecorator { return storage.Decorator(false) },
		"shared watch cache": func(t *testing.T, url string) generic.StorageDecorator {
			shared, err := NewSharedEtcd(t.Context(), backend(url).Transport)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = shared.Close() })
			return shared.CachingDecorator()
		},
	}
}

// crdRegistry holds the CRDs of every logical cluster of the test, as a CRD
// informer would.
type crdRegistry struct {
	mu   sync.Mutex
	crds map[logicalcluster.Name]map[string]*apiextensionsv1.CustomResourceDefinition
}

func (r *crdRegistry) set(cluster logicalcluster.Name, crd *apiextensionsv1.CustomResourceDefinition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.crds == nil {
		r.crds = map[logicalcluster.Name]map[string]*apiextensionsv1.CustomResourceDefinition{}
	}
	if r.crds[cluster] == nil {
		r.crds[cluster] = map[string]*apiextensionsv1.CustomResourceDefinition{}
	}
	r.crds[cluster][crd.Name] = crd
}

// update changes the CRD of a cluster and bumps its resourceVersion.
func (r *crdRegistry) update(cluster logicalcluster.Name, name string, change func(*apiextensionsv1.CustomResourceDefinition)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	crd := r.crds[cluster][name].DeepCopy()
	change(crd)
	var rv int
	_, _ = fmt.Sscan(crd.ResourceVersion, &rv)
	crd.ResourceVersion = fmt.Sprint(rv + 1)
	r.crds[cluster][name] = crd
}

func (r *crdRegistry) get(cluster logicalcluster.Name, group, resource string) (*apiextensionsv1.CustomResourceDefinition, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if crd, ok := r.crds[cluster][resource+"."+group]; ok {
		return crd, nil
	}
	return nil, apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), resource+"."+group)
}

// named returns the CRDs of a name in every cluster.
func (r *crdRegistry) named(group, resource string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crds := range r.crds {
		if crd, ok := crds[resource+"."+group]; ok {
			out = append(out, crd)
		}
	}
	return out, nil
}

// testServer is the handler behind the filters the shard runs before it:
// the /clusters/<name> filter, RequestInfo, the warning recorder and an
// authenticated shard admin.
type testServer struct {
	handler *Handler
	server  *httptest.Server
	crds    *crdRegistry
}

func newTestServer(t *testing.T, getter generic.RESTOptionsGetter) *testServer {
	t.Helper()
	crds := &crdRegistry{}
	h, err := New(Config{
		CRDs:              crds.get,
		CRDsNamed:         crds.named,
		RESTOptionsGetter: getter,
		Authorizer:        authorizerfactory.NewAlwaysAllowAuthorizer(),
		MaxEntries:        16,
		IdleTimeout:       time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Destroy)

	var chain http.Handler = h
	chain = withUser(chain, &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters", user.AllAuthenticated}})
	chain = genericapifilters.WithWarningRecorder(chain)
	chain = genericapifilters.WithRequestInfo(chain, &request.RequestInfoFactory{
		APIPrefixes:          sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api"),
	})
	chain = filters.WithCluster(chain, serializer.NewCodecFactory(newScheme()))
	srv := httptest.NewServer(chain)
	t.Cleanup(srv.Close)
	return &testServer{handler: h, server: srv, crds: crds}
}

func withUser(h http.Handler, u user.Info) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.ServeHTTP(w, req.WithContext(request.WithUser(req.Context(), u)))
	})
}

// client returns a dynamic client for a logical cluster ("*" for all).
func (s *testServer) client(t *testing.T, cluster string) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(&rest.Config{Host: s.server.URL + "/clusters/" + cluster, QPS: 1000, Burst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// etcdClient returns a raw etcd client to look at keys.
func etcdClient(t *testing.T, url string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// etcdKeys returns the keys under a prefix.
func etcdKeys(ctx context.Context, t *testing.T, c *clientv3.Client, prefix string) []string {
	t.Helper()
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// widgetCRD returns an Established CRD widgets.example.com of a logical
// cluster with the given schema of spec.size ("integer" or "string").
// Cluster a's variant also has a default, a CEL rule, a scale subresource
// and a selectable field.
func widgetCRD(cluster logicalcluster.Name, sizeType string) *apiextensionsv1.CustomResourceDefinition {
	spec := apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"size":     {Type: sizeType},
			"color":    {Type: "string"},
			"replicas": {Type: "integer"},
		},
	}
	version := apiextensionsv1.CustomResourceDefinitionVersion{
		Name: "v1", Served: true, Storage: true,
		Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
			{Name: "Size", Type: sizeType, JSONPath: ".spec.size"},
		},
	}
	if sizeType == "integer" {
		color := spec.Properties["color"]
		color.Default = &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}
		spec.Properties["color"] = color
		spec.XValidations = apiextensionsv1.ValidationRules{{Rule: "!has(self.size) || self.size <= 100", Message: "size must be at most 100"}}
		version.Subresources.Scale = &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}
		version.SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}}
	}
	version.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": spec,
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"phase":    {Type: "string"},
				"replicas": {Type: "integer"},
			}},
		},
	}}
	names := apiextensionsv1.CustomResourceDefinitionNames{
		Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList",
		ShortNames: []string{"wd"}, Categories: []string{"all"},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "widgets.example.com",
			UID:             types.UID("uid-" + string(cluster)),
			ResourceVersion: "1",
			Annotations:     map[string]string{logicalcluster.AnnotationKey: string(cluster)},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:      "example.com",
			Names:      names,
			Scope:      apiextensionsv1.NamespaceScoped,
			Versions:   []apiextensionsv1.CustomResourceDefinitionVersion{version},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			AcceptedNames:  names,
			StoredVersions: []string{"v1"},
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
				{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
			},
		},
	}
}
