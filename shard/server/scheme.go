package server

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/builtin"
	"github.com/tessera-dev/tessera/shard/registry/tenancy/workspaces"
)

// NewScheme returns a new scheme with every type the shard serves. Types
// that have no separate internal version are registered as their own
// internal version, so conversion is a copy.
func NewScheme() (*runtime.Scheme, serializer.CodecFactory, error) {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	s.AddUnversionedTypes(unversioned,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})

	install.Install(s)
	for _, add := range []func(*runtime.Scheme) error{
		builtin.AddToScheme,
		corev1alpha1.AddToScheme,
		tenancyv1alpha1.AddToScheme,
		apisv1alpha1.AddToScheme,
		topologyv1alpha1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
		asInternal(corev1alpha1.SchemeGroupVersion, corev1alpha1.AddToScheme),
		asInternal(tenancyv1alpha1.SchemeGroupVersion, tenancyv1alpha1.AddToScheme),
		asInternal(apisv1alpha1.SchemeGroupVersion, apisv1alpha1.AddToScheme),
		// v1alpha2 of APIExport and APIBinding converts to and from the
		// v1alpha1 types, which are the internal and stored form.
		apisv1alpha2.AddToScheme,
		asInternal(topologyv1alpha1.SchemeGroupVersion, topologyv1alpha1.AddToScheme),
		workspaces.AddFieldLabelConversions,
		asInternal(authenticationv1.SchemeGroupVersion, authenticationv1.AddToScheme),
		asInternal(authorizationv1.SchemeGroupVersion, authorizationv1.AddToScheme),
	} {
		if err := add(s); err != nil {
			return nil, serializer.CodecFactory{}, err
		}
	}
	// apis.kcp.io stores v1alpha1: its version priority in the scheme
	// chooses the storage version. Discovery prefers v1alpha2, as kcp's
	// (installAPIs).
	for _, gvs := range [][]schema.GroupVersion{{corev1alpha1.SchemeGroupVersion}, {tenancyv1alpha1.SchemeGroupVersion}, {apisv1alpha1.SchemeGroupVersion, apisv1alpha2.SchemeGroupVersion}, {topologyv1alpha1.SchemeGroupVersion}, {authenticationv1.SchemeGroupVersion}, {authorizationv1.SchemeGroupVersion}} {
		if err := s.SetVersionPriority(gvs...); err != nil {
			return nil, serializer.CodecFactory{}, err
		}
	}
	return s, serializer.NewCodecFactory(s), nil
}

// optionKinds are registered with every external version by
// metav1.AddToGroupVersion; they have no internal twin.
var optionKinds = sets.New("WatchEvent", "ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions", "PatchOptions")

// asInternal registers the kinds that add registers for gv also as the
// internal version of gv's group.
func asInternal(gv schema.GroupVersion, add func(*runtime.Scheme) error) func(*runtime.Scheme) error {
	return func(s *runtime.Scheme) error {
		tmp := runtime.NewScheme()
		if err := add(tmp); err != nil {
			return err
		}
		internal := schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}
		for kind := range tmp.KnownTypes(gv) {
			if optionKinds.Has(kind) {
				continue
			}
			obj, err := tmp.New(gv.WithKind(kind))
			if err != nil {
				return fmt.Errorf("cannot create %s: %w", gv.WithKind(kind), err)
			}
			s.AddKnownTypeWithName(internal.WithKind(kind), obj)
		}
		return nil
	}
}
