package server

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/apis/apibindings"
	"github.com/tessera-dev/tessera/shard/registry/apis/apiexportendpointslices"
	"github.com/tessera-dev/tessera/shard/registry/apis/apiexports"
	"github.com/tessera-dev/tessera/shard/registry/apis/apiresourceschemas"
	"github.com/tessera-dev/tessera/shard/registry/builtin"
	"github.com/tessera-dev/tessera/shard/registry/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/shards"
	"github.com/tessera-dev/tessera/shard/registry/tenancy/workspaces"
	"github.com/tessera-dev/tessera/shard/registry/tenancy/workspacetypes"
	"github.com/tessera-dev/tessera/shard/registry/topology/partitions"
	"github.com/tessera-dev/tessera/shard/registry/topology/partitionsets"
)

// installAPIs installs the built-in APIs every logical cluster serves.
func (s *Server) installAPIs() error {
	groups := map[string]groupStorage{}
	for _, r := range builtin.Resources() {
		storage, err := r.Storage(s.Scheme, s.Storage)
		if err != nil {
			return errorf(r.GroupVersion.WithResource(r.Resource).String(), err)
		}
		if groups[r.GroupVersion.Group] == nil {
			groups[r.GroupVersion.Group] = groupStorage{}
		}
		groups[r.GroupVersion.Group].add(r.GroupVersion, storage)
	}

	// TokenRequest: `kubectl create token`.
	groups[""].add(corev1.SchemeGroupVersion, map[string]rest.Storage{"serviceaccounts/token": s.authn.TokenRequest})

	crd, err := customresourcedefinition.NewREST(s.Scheme, s.Storage)
	if err != nil {
		return errorf("customresourcedefinitions", err)
	}
	groups[apiextensionsv1.GroupName] = groupStorage{}
	groups[apiextensionsv1.GroupName].add(apiextensionsv1.SchemeGroupVersion, map[string]rest.Storage{
		"customresourcedefinitions":        crd,
		"customresourcedefinitions/status": customresourcedefinition.NewStatusREST(s.Scheme, crd),
	})

	lc, err := logicalcluster.NewStorage(s.Scheme, s.Storage)
	if err != nil {
		return errorf("logicalclusters", err)
	}
	groups[corev1alpha1.SchemeGroupVersion.Group] = groupStorage{}
	groups[corev1alpha1.SchemeGroupVersion.Group].add(corev1alpha1.SchemeGroupVersion, lc)
	shardStorage, err := shards.NewStorage(s.Scheme, s.Storage)
	if err != nil {
		return errorf("shards", err)
	}
	groups[corev1alpha1.SchemeGroupVersion.Group].add(corev1alpha1.SchemeGroupVersion, shardStorage)

	// tenancy.kcp.io is served in every logical cluster as a system API
	// until APIExports move it behind APIBindings.
	groups[tenancyv1alpha1.SchemeGroupVersion.Group] = groupStorage{}
	for name, newStorage := range map[string]func(*runtime.Scheme, generic.RESTOptionsGetter) (map[string]rest.Storage, error){
		"workspaces":     workspaces.NewStorage,
		"workspacetypes": workspacetypes.NewStorage,
	} {
		st, err := newStorage(s.Scheme, s.Storage)
		if err != nil {
			return errorf(name, err)
		}
		groups[tenancyv1alpha1.SchemeGroupVersion.Group].add(tenancyv1alpha1.SchemeGroupVersion, st)
	}

	// apis.kcp.io: APIs as a service.
	schemas, err := apiresourceschemas.NewStorage(s.Scheme, s.Storage)
	if err != nil {
		return errorf("apiresourceschemas", err)
	}
	groups[apisv1alpha1.SchemeGroupVersion.Group] = groupStorage{}
	groups[apisv1alpha1.SchemeGroupVersion.Group].add(apisv1alpha1.SchemeGroupVersion, schemas)
	for name, newStorage := range map[string]func(*runtime.Scheme, generic.RESTOptionsGetter) (map[string]rest.Storage, error){
		"apiexports":              apiexports.NewStorage,
		"apibindings":             apibindings.NewStorage,
		"apiexportendpointslices": apiexportendpointslices.NewStorage,
	} {
		st, err := newStorage(s.Scheme, s.Storage)
		if err != nil {
			return errorf(name, err)
		}
		groups[apisv1alpha1.SchemeGroupVersion.Group].add(apisv1alpha1.SchemeGroupVersion, st)
		// APIExports and APIBindings are also served in v1alpha2, from
		// the same storage (the scheme converts); schemas and endpoint
		// slices have no v1alpha2, as in kcp.
		if name == "apiexports" || name == "apibindings" {
			groups[apisv1alpha1.SchemeGroupVersion.Group].add(apisv1alpha2.SchemeGroupVersion, st)
		}
	}

	// topology.kcp.io: Partitions of the shards, for endpoint slices.
	groups[topologyv1alpha1.SchemeGroupVersion.Group] = groupStorage{}
	for name, newStorage := range map[string]func(*runtime.Scheme, generic.RESTOptionsGetter) (map[string]rest.Storage, error){
		"partitions":    partitions.NewStorage,
		"partitionsets": partitionsets.NewStorage,
	} {
		st, err := newStorage(s.Scheme, s.Storage)
		if err != nil {
			return errorf(name, err)
		}
		groups[topologyv1alpha1.SchemeGroupVersion.Group].add(topologyv1alpha1.SchemeGroupVersion, st)
	}

	for g, storage := range s.reviewStorage() {
		if groups[g.Group] == nil {
			groups[g.Group] = groupStorage{}
		}
		groups[g.Group].add(g, storage)
	}

	builtin, err := newBuiltinNames(s.Scheme, groups)
	if err != nil {
		return errorf("API names", err)
	}
	s.builtinNames = builtin.lookup

	if core, ok := groups[""]; ok {
		info := genericapiserver.NewDefaultAPIGroupInfo("", s.Scheme, metav1.ParameterCodec, s.Codecs)
		info.VersionedResourcesStorageMap = core
		if err := s.GenericAPIServer.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, &info); err != nil {
			return errorf("the core API group", err)
		}
		delete(groups, "")
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	infos := make([]*genericapiserver.APIGroupInfo, 0, len(names))
	for _, g := range names {
		info := genericapiserver.NewDefaultAPIGroupInfo(g, s.Scheme, metav1.ParameterCodec, s.Codecs)
		info.VersionedResourcesStorageMap = groups[g]
		if g == apisv1alpha2.GroupName {
			// kcp serves apis.kcp.io as CRDs, whose discovery prefers
			// the highest version: v1alpha2 (kcp's kubectl plugin binds
			// in the preferred version). Storage stays v1alpha1, the
			// scheme's first version of the group.
			info.PrioritizedVersions = []schema.GroupVersion{apisv1alpha2.SchemeGroupVersion, apisv1alpha1.SchemeGroupVersion}
		}
		infos = append(infos, &info)
	}
	if err := s.GenericAPIServer.InstallAPIGroups(infos...); err != nil {
		return errorf("API groups", err)
	}
	return nil
}
