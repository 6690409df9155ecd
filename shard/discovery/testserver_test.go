package discovery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	restclient "k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/filters"
)

// testServer is a real generic API server without etcd that serves core/v1
// configmaps, coordination.k8s.io/v1 leases and apiextensions.k8s.io/v1
// customresourcedefinitions from in-memory fakes, with the cluster filter
// outermost and Wrap around its API handler, as the shard assembles them.
type testServer struct {
	URL     string
	Handler *Handler
	CRDs    *fakeCRDs
}

// startTestServer starts a test server; config may adjust the Config.
func startTestServer(t *testing.T, config func(*Config)) *testServer {
	t.Helper()
	scheme := newTestScheme(t)
	codecs := serializer.NewCodecFactory(scheme)
	crds := &fakeCRDs{byCluster: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{}}

	gc := genericapiserver.NewRecommendedConfig(codecs)
	gc.EffectiveVersion = compatibility.NewEffectiveVersionFromString("1.37.2", "", "")
	namer := openapinamer.NewDefinitionNamer(scheme)
	gc.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(testOpenAPIDefinitions, namer)
	gc.OpenAPIConfig.Info.Title = "Test"
	gc.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(testOpenAPIDefinitions, namer)
	gc.OpenAPIV3Config.Info.Title = "Test"
	gc.Authentication.Authenticator = authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
		return &authenticator.Response{User: &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}}, true, nil
	})
	gc.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	gc.ExternalAddress = "shard.example:6443"
	gc.LoopbackClientConfig = &restclient.Config{Host: "https://shard.example:6443"}

	s := &testServer{CRDs: crds}
	gc.BuildHandlerChainFunc = func(api http.Handler, c *genericapiserver.Config) http.Handler {
		dc := Config{CRDs: crds.list, Serializer: c.Serializer}
		if config != nil {
			config(&dc)
		}
		s.Handler = Wrap(api, dc)
		return filters.WithCluster(genericapiserver.DefaultBuildHandlerChain(s.Handler, c), codecs)
	}
	generic, err := gc.Complete().New("discovery-test", genericapiserver.NewEmptyDelegate())
	if err != nil {
		t.Fatalf("creating the generic server: %v", err)
	}
	t.Cleanup(generic.Destroy)
	installTestAPIs(t, generic, scheme, codecs)
	generic.PrepareRun()

	ts := httptest.NewServer(generic.Handler)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func newTestScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	v1 := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(scheme, v1)
	scheme.AddUnversionedTypes(v1, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	install.Install(scheme)
	for gv, types := range map[schema.GroupVersion][]runtime.Object{
		corev1.SchemeGroupVersion:         {&corev1.ConfigMap{}, &corev1.ConfigMapList{}},
		coordinationv1.SchemeGroupVersion: {&coordinationv1.Lease{}, &coordinationv1.LeaseList{}},
	} {
		scheme.AddKnownTypes(gv, types...)
		if gv.Group != "" {
			metav1.AddToGroupVersion(scheme, gv)
		}
		internal := schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}
		for _, obj := range types {
			scheme.AddKnownTypes(internal, obj.DeepCopyObject())
		}
		if err := scheme.SetVersionPriority(gv); err != nil {
			t.Fatal(err)
		}
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
	return scheme
}

func installTestAPIs(t *testing.T, s *genericapiserver.GenericAPIServer, scheme *runtime.Scheme, codecs serializer.CodecFactory) {
	t.Helper()
	core := genericapiserver.NewDefaultAPIGroupInfo("", scheme, metav1.ParameterCodec, codecs)
	core.VersionedResourcesStorageMap = map[string]map[string]rest.Storage{"v1": {
		"configmaps": &fakeStorage{
			resource:   corev1.Resource("configmaps"),
			singular:   "configmap",
			namespaced: true,
			shortNames: []string{"cm"},
			newObj:     func() runtime.Object { return &corev1.ConfigMap{} },
			newList:    func() runtime.Object { return &corev1.ConfigMapList{} },
		},
	}}
	if err := s.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, &core); err != nil {
		t.Fatalf("installing core: %v", err)
	}
	coordination := genericapiserver.NewDefaultAPIGroupInfo(coordinationv1.GroupName, scheme, metav1.ParameterCodec, codecs)
	coordination.VersionedResourcesStorageMap = map[string]map[string]rest.Storage{"v1": {
		"leases": &fakeStorage{
			resource:   coordinationv1.Resource("leases"),
			singular:   "lease",
			namespaced: true,
			newObj:     func() runtime.Object { return &coordinationv1.Lease{} },
			newList:    func() runtime.Object { return &coordinationv1.LeaseList{} },
		},
	}}
	apiextensions := genericapiserver.NewDefaultAPIGroupInfo(apiextensionsv1.GroupName, scheme, metav1.ParameterCodec, codecs)
	apiextensions.VersionedResourcesStorageMap = map[string]map[string]rest.Storage{"v1": {
		"customresourcedefinitions": &fakeStorage{
			resource:   apiextensionsv1.Resource("customresourcedefinitions"),
			singular:   "customresourcedefinition",
			shortNames: []string{"crd", "crds"},
			categories: []string{"api-extensions"},
			newObj:     func() runtime.Object { return &apiextensionsinternal.CustomResourceDefinition{} },
			newList:    func() runtime.Object { return &apiextensionsinternal.CustomResourceDefinitionList{} },
		},
	}}
	if err := s.InstallAPIGroups(&apiextensions, &coordination); err != nil {
		t.Fatalf("installing API groups: %v", err)
	}
}

// fakeStorage is a read-only, always empty resource: enough for discovery
// and OpenAPI.
type fakeStorage struct {
	resource   schema.GroupResource
	singular   string
	namespaced bool
	shortNames []string
	categories []string
	newObj     func() runtime.Object
	newList    func() runtime.Object
}

var (
	_ rest.Storage              = &fakeStorage{}
	_ rest.Getter               = &fakeStorage{}
	_ rest.Lister               = &fakeStorage{}
	_ rest.Scoper               = &fakeStorage{}
	_ rest.SingularNameProvider = &fakeStorage{}
	_ rest.ShortNamesProvider   = &fakeStorage{}
	_ rest.CategoriesProvider   = &fakeStorage{}
)

func (s *fakeStorage) New() runtime.Object     { return s.newObj() }
func (s *fakeStorage) Destroy()                {}
func (s *fakeStorage) NewList() runtime.Object { return s.newList() }
func (s *fakeStorage) NamespaceScoped() bool   { return s.namespaced }
func (s *fakeStorage) GetSingularName() string { return s.singular }
func (s *fakeStorage) ShortNames() []string    { return s.shortNames }
func (s *fakeStorage) Categories() []string    { return s.categories }
func (s *fakeStorage) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	return nil, apierrors.NewNotFound(s.resource, name)
}

func (s *fakeStorage) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return s.newList(), nil
}

func (s *fakeStorage) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return rest.NewDefaultTableConvertor(s.resource).ConvertToTable(ctx, obj, opts)
}

// fakeCRDs is a CRDLister over a map that tests change.
type fakeCRDs struct {
	lock      sync.Mutex
	calls     int
	byCluster map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition
}

func (f *fakeCRDs) list(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.calls++
	return f.byCluster[cluster], nil
}

func (f *fakeCRDs) callCount() int {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.calls
}

func (f *fakeCRDs) set(cluster logicalcluster.Name, crds ...*apiextensionsv1.CustomResourceDefinition) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.byCluster[cluster] = crds
}

// testOpenAPIDefinitions are apiextensions-apiserver's generated definitions
// (meta/v1, apiextensions, autoscaling/v1 Scale) plus small hand-written ones
// for the test's core and coordination types.
func testOpenAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := apiextensionsopenapi.GetOpenAPIDefinitions(ref)
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
	object := func(description string, extra map[string]spec.Schema) common.OpenAPIDefinition {
		props := map[string]spec.Schema{
			"apiVersion": str,
			"kind":       str,
			"metadata":   {SchemaProps: spec.SchemaProps{Default: map[string]interface{}{}, Ref: ref(metav1.ObjectMeta{}.OpenAPIModelName())}},
		}
		for k, v := range extra {
			props[k] = v
		}
		return common.OpenAPIDefinition{
			Schema:       spec.Schema{SchemaProps: spec.SchemaProps{Description: description, Type: []string{"object"}, Properties: props}},
			Dependencies: []string{metav1.ObjectMeta{}.OpenAPIModelName()},
		}
	}
	list := func(item string) common.OpenAPIDefinition {
		return common.OpenAPIDefinition{
			Schema: spec.Schema{SchemaProps: spec.SchemaProps{
				Type:     []string{"object"},
				Required: []string{"items"},
				Properties: map[string]spec.Schema{
					"apiVersion": str,
					"kind":       str,
					"metadata":   {SchemaProps: spec.SchemaProps{Default: map[string]interface{}{}, Ref: ref(metav1.ListMeta{}.OpenAPIModelName())}},
					"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{
						SchemaProps: spec.SchemaProps{Default: map[string]interface{}{}, Ref: ref(item)},
					}}}},
				},
			}},
			Dependencies: []string{metav1.ListMeta{}.OpenAPIModelName(), item},
		}
	}
	defs[corev1.ConfigMap{}.OpenAPIModelName()] = object("ConfigMap holds configuration data for pods to consume.", map[string]spec.Schema{
		"data": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &str}}},
	})
	defs[corev1.ConfigMapList{}.OpenAPIModelName()] = list(corev1.ConfigMap{}.OpenAPIModelName())
	defs[coordinationv1.Lease{}.OpenAPIModelName()] = object("Lease defines a lease concept.", map[string]spec.Schema{
		"spec": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"holderIdentity": str}}},
	})
	defs[coordinationv1.LeaseList{}.OpenAPIModelName()] = list(coordinationv1.Lease{}.OpenAPIModelName())
	return defs
}
