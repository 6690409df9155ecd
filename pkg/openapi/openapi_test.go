package openapi

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

const gvkExtension = "x-kubernetes-group-version-kind"

// newScheme returns a scheme with every group version whose types
// GetOpenAPIDefinitions covers.
func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
		autoscalingv1.AddToScheme,
		certificatesv1.AddToScheme,
		coordinationv1.AddToScheme,
		eventsv1.AddToScheme,
		rbacv1.AddToScheme,
		apiextensionsv1.AddToScheme,
		corev1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// servedKinds returns the versioned kinds of scheme, sorted.
func servedKinds(scheme *runtime.Scheme) []schema.GroupVersionKind {
	var gvks []schema.GroupVersionKind
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		gvks = append(gvks, gvk)
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	return gvks
}

// TestDefinitionNames checks that definitions are keyed by OpenAPI model
// names, the names kubectl explain and server-side apply look types up by.
func TestDefinitionNames(t *testing.T) {
	defs := GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) })

	for _, name := range []string{
		"io.k8s.api.core.v1.ConfigMap",
		"io.k8s.api.core.v1.Pod",
		"io.k8s.api.rbac.v1.ClusterRole",
		"io.k8s.api.autoscaling.v1.Scale",
		"io.k8s.api.coordination.v1.Lease",
		"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"io.k8s.apimachinery.pkg.api.resource.Quantity",
		"io.k8s.apimachinery.pkg.util.intstr.IntOrString",
		"io.k8s.apimachinery.pkg.runtime.RawExtension",
		"io.k8s.apimachinery.pkg.version.Info",
		"io.kcp.core.v1alpha1.LogicalCluster",
		"io.kcp.core.v1alpha1.Shard",
		"io.kcp.conditions.v1alpha1.Condition",
	} {
		if _, ok := defs[name]; !ok {
			t.Errorf("no definition %q", name)
		}
	}
	// Go import paths as names (k8s.io/api/core/v1.ConfigMap) would not match
	// what the scheme and the definition namer use.
	for name := range defs {
		if strings.Contains(name, "/") {
			t.Errorf("definition %q is named by Go import path, not by OpenAPI model name", name)
		}
	}
}

// TestReferencesResolve checks that every reference and dependency of every
// definition is itself defined: the OpenAPI builders and server-side apply's
// type converter fail on dangling references.
func TestReferencesResolve(t *testing.T) {
	referenced := map[string]bool{}
	defs := GetOpenAPIDefinitions(func(name string) spec.Ref {
		referenced[name] = true
		return spec.MustCreateRef("#/definitions/" + common.EscapeJsonPointer(name))
	})
	if len(referenced) == 0 {
		t.Fatal("no definition references another one")
	}
	for name := range referenced {
		if _, ok := defs[name]; !ok {
			t.Errorf("reference to undefined %q", name)
		}
	}
	for name, def := range defs {
		for _, dep := range def.Dependencies {
			if _, ok := defs[dep]; !ok {
				t.Errorf("%s depends on undefined %q", name, dep)
			}
		}
	}
}

// TestSchemeKindsDefined checks that every kind of the served group versions
// has a definition under the name the scheme gives it, so the definition
// namer attaches its group-version-kind.
func TestSchemeKindsDefined(t *testing.T) {
	scheme := newScheme(t)
	defs := GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) })
	for _, gvk := range servedKinds(scheme) {
		name, err := scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			t.Errorf("%v: %v", gvk, err)
			continue
		}
		if _, ok := defs[name]; !ok {
			t.Errorf("%v: no definition %q", gvk, name)
		}
	}
}

// TestServerSideApplyModels builds the OpenAPI v3 models the way
// genericapiserver does for server-side apply (DefaultOpenAPIV3Config with
// openapinamer, BuildOpenAPIDefinitionsForResources, NewTypeConverter) and
// uses the type converter on built-in and kcp objects.
func TestServerSideApplyModels(t *testing.T) {
	scheme := newScheme(t)
	namer := openapinamer.NewDefinitionNamer(scheme)

	// Same as genericapiserver.DefaultOpenAPIV3Config, without importing the
	// whole server package.
	config := &common.OpenAPIV3Config{
		Info:              &spec.Info{InfoProps: spec.InfoProps{Title: "test", Version: "v0"}},
		GetDefinitions:    GetOpenAPIDefinitions,
		GetDefinitionName: namer.GetDefinitionName,
	}
	config.Definitions = GetOpenAPIDefinitions(func(name string) spec.Ref {
		defName, _ := config.GetDefinitionName(name)
		return spec.MustCreateRef("#/components/schemas/" + common.EscapeJsonPointer(defName))
	})

	models, err := builder3.BuildOpenAPIDefinitionsForResources(config, canonicalTypeNames(t, scheme)...)
	if err != nil {
		t.Fatalf("building models: %v", err)
	}

	for name, want := range map[string]schema.GroupVersionKind{
		"io.k8s.api.core.v1.ConfigMap":                corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		"io.k8s.api.rbac.v1.Role":                     rbacv1.SchemeGroupVersion.WithKind("Role"),
		"io.k8s.api.autoscaling.v1.Scale":             autoscalingv1.SchemeGroupVersion.WithKind("Scale"),
		"io.kcp.core.v1alpha1.LogicalCluster":         corev1alpha1.SchemeGroupVersion.WithKind("LogicalCluster"),
		"io.kcp.core.v1alpha1.Shard":                  corev1alpha1.SchemeGroupVersion.WithKind("Shard"),
		"io.k8s.apimachinery.pkg.apis.meta.v1.Status": {Version: "v1", Kind: "Status"},
	} {
		model, ok := models[name]
		if !ok {
			t.Errorf("no model %q", name)
			continue
		}
		if !hasGVK(model, want) {
			t.Errorf("model %q: %s = %v, want it to contain %v", name, gvkExtension, model.Extensions[gvkExtension], want)
		}
	}

	// List and map markers survive: they drive how apply merges lists.
	containers := models["io.k8s.api.core.v1.PodSpec"].Properties["containers"]
	if containers.Extensions["x-kubernetes-list-type"] != "map" ||
		!reflect.DeepEqual(containers.Extensions["x-kubernetes-list-map-keys"], []interface{}{"name"}) {
		t.Errorf("PodSpec.containers extensions = %v, want list-type map keyed by name", containers.Extensions)
	}
	conditions := models["io.kcp.core.v1alpha1.LogicalClusterStatus"].Properties["conditions"]
	if conditions.Extensions["x-kubernetes-list-type"] != "atomic" {
		t.Errorf("LogicalClusterStatus.conditions extensions = %v, want list-type atomic", conditions.Extensions)
	}

	converter, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		t.Fatalf("type converter: %v", err)
	}

	lc := &corev1alpha1.LogicalCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: corev1alpha1.SchemeGroupVersion.String(), Kind: "LogicalCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName},
		Spec: corev1alpha1.LogicalClusterSpec{
			Owner:        &corev1alpha1.LogicalClusterOwner{APIVersion: "tenancy.kcp.io/v1alpha1", Resource: "workspaces", Name: "org", Cluster: "root", UID: "1"},
			Initializers: []corev1alpha1.LogicalClusterInitializer{"root:universal"},
		},
		Status: corev1alpha1.LogicalClusterStatus{
			URL:   "https://example/clusters/abc",
			Phase: corev1alpha1.LogicalClusterPhaseInitializing,
			Conditions: conditionsv1alpha1.Conditions{{
				Type: corev1alpha1.WorkspaceInitialized, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now(),
			}},
		},
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"},
		Data:       map[string]string{"a": "b"},
	}
	for _, obj := range []runtime.Object{lc, cm} {
		if _, err := converter.ObjectToTyped(obj); err != nil {
			t.Errorf("%T to typed: %v", obj, err)
		}
	}

	// The converter really uses the LogicalCluster schema: unknown fields are
	// rejected.
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(lc)
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u, "x", "spec", "noSuchField"); err != nil {
		t.Fatal(err)
	}
	if _, err := converter.ObjectToTyped(&unstructured.Unstructured{Object: u}); err == nil {
		t.Errorf("LogicalCluster with unknown field spec.noSuchField converted without error")
	}
}

// TestOpenAPIV2Models builds the OpenAPI v2 definitions the way
// genericapiserver.DefaultOpenAPIConfig does, for clients that still read
// /openapi/v2.
func TestOpenAPIV2Models(t *testing.T) {
	scheme := newScheme(t)
	namer := openapinamer.NewDefinitionNamer(scheme)
	config := &common.Config{
		Info:              &spec.Info{InfoProps: spec.InfoProps{Title: "test", Version: "v0"}},
		GetDefinitions:    GetOpenAPIDefinitions,
		GetDefinitionName: namer.GetDefinitionName,
	}
	swagger, err := builder.BuildOpenAPIDefinitionsForResources(config, canonicalTypeNames(t, scheme)...)
	if err != nil {
		t.Fatalf("building definitions: %v", err)
	}
	for name, want := range map[string]schema.GroupVersionKind{
		"io.k8s.api.core.v1.ConfigMap":        corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		"io.kcp.core.v1alpha1.LogicalCluster": corev1alpha1.SchemeGroupVersion.WithKind("LogicalCluster"),
	} {
		def, ok := swagger.Definitions[name]
		if !ok {
			t.Errorf("no definition %q", name)
			continue
		}
		if !hasGVK(&def, want) {
			t.Errorf("definition %q: %s = %v, want it to contain %v", name, gvkExtension, def.Extensions[gvkExtension], want)
		}
	}
}

// canonicalTypeNames returns the names genericapiserver asks the OpenAPI
// builders for: one per served kind.
func canonicalTypeNames(t *testing.T, scheme *runtime.Scheme) []string {
	t.Helper()
	var names []string
	for _, gvk := range servedKinds(scheme) {
		obj, err := scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, util.GetCanonicalTypeName(obj))
	}
	return names
}

// hasGVK tells whether the group-version-kind extension of s lists want.
func hasGVK(s *spec.Schema, want schema.GroupVersionKind) bool {
	gvks, ok := s.Extensions[gvkExtension].([]interface{})
	if !ok {
		return false
	}
	for _, x := range gvks {
		m, ok := x.(map[string]interface{})
		if ok && m["group"] == want.Group && m["version"] == want.Version && m["kind"] == want.Kind {
			return true
		}
	}
	return false
}
