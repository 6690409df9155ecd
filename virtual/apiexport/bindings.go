package apiexport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// The APIBindings of an export's consumers are always served in its
// virtual workspace, as kcp's, whether or not the export claims them, and
// read-only there (get, list, watch): a provider sees who binds its export
// and what they accepted, but cannot change a consumer's binding, which
// would let it grant itself claims. Only the bindings of this export are
// shown. An export that claims apibindings gets its claim's rules instead.

var apiBindings = apisv1alpha1.SchemeGroupVersion.WithResource("apibindings").GroupResource()

// bindingVersions are the versions APIBindings are served in, newest
// first.
var bindingVersions = []string{"v1alpha2", "v1alpha1"}

// readOnlyVerbs are the verbs on the consumers' bindings.
var readOnlyVerbs = []string{"get", "list", "watch"}

// bindingsServed tells whether the export's consumers' bindings are served
// read-only: unless the export claims them.
func bindingsServed(export *apisv1alpha1.APIExport) bool {
	return claimOf(export, apiBindings.Group, apiBindings.Resource) == nil
}

// bindingResources are the discovery entries of the consumers' bindings.
func bindingResources() []claimed {
	out := make([]claimed, 0, len(bindingVersions))
	for _, v := range bindingVersions {
		out = append(out, claimed{gv: schema.GroupVersion{Group: apiBindings.Group, Version: v}, resource: metav1.APIResource{
			Name: apiBindings.Resource, SingularName: "apibinding", Kind: "APIBinding", Verbs: metav1.Verbs(readOnlyVerbs),
		}})
	}
	return out
}

// bindingsRequest routes a request for the consumers' bindings.
func (h *handler) bindingsRequest(req *http.Request, t target, gv schema.GroupVersion, prefix, rest []string, legacyWatch bool) (routed, error) {
	if !slices.Contains(bindingVersions, gv.Version) || len(rest) > 2 {
		return routed{}, forward.ErrPathNotFound()
	}
	named := len(rest) == 2
	verb := verbOf(req, named, legacyWatch)
	if !slices.Contains(readOnlyVerbs, verb) {
		name := ""
		if named {
			name = rest[1]
		}
		return routed{}, apierrors.NewForbidden(apiBindings, name, fmt.Errorf("the APIBindings of the consumers of APIExport %s are read-only here (get, list, watch)", t.export.Name))
	}
	if t.cluster.Wildcard && verb == "get" {
		return routed{}, apierrors.NewMethodNotSupported(apiBindings, "get across all logical clusters")
	}
	if legacyWatch {
		return routed{}, apierrors.NewBadRequest("use ?watch=true for APIBindings")
	}
	clusterSegment := string(logicalcluster.Wildcard)
	if !t.cluster.Wildcard {
		clusterSegment = string(t.cluster.Name)
	}
	segments := append(append(append([]string(nil), prefix...), apiBindings.Resource), rest[1:]...)
	r := routed{verbs: []string{verb}, shardPath: "/clusters/" + clusterSegment + forward.Join(segments)}
	if verb == "get" {
		if !h.bindsExport(t.cluster.Name, rest[1], t.export) {
			return routed{}, apierrors.NewNotFound(apiBindings, rest[1])
		}
		return r, nil
	}
	r.filter = func(raw json.RawMessage) bool { return bindingOfExport(raw, t.export) }
	return r, nil
}

// bindsExport tells whether the binding name of cluster binds export.
func (h *handler) bindsExport(cluster logicalcluster.Name, name string, export *apisv1alpha1.APIExport) bool {
	if h.cfg.Bindings.Informer() == nil {
		return false
	}
	b, err := h.cfg.Bindings.Lister().Cluster(cluster).Get(name)
	return err == nil && b.Spec.Reference.Export != nil && b.Spec.Reference.Export.Name == export.Name &&
		b.Status.APIExportClusterName == logicalcluster.From(export).String()
}

// bindingOfExport tells whether a binding (JSON, either version) binds
// export.
func bindingOfExport(raw json.RawMessage, export *apisv1alpha1.APIExport) bool {
	var b struct {
		Spec struct {
			Reference struct {
				Export *struct {
					Name string `json:"name"`
				} `json:"export"`
			} `json:"reference"`
		} `json:"spec"`
		Status struct {
			APIExportClusterName string `json:"apiExportClusterName"`
		} `json:"status"`
	}
	if json.Unmarshal(raw, &b) != nil || b.Spec.Reference.Export == nil {
		return false
	}
	return b.Spec.Reference.Export.Name == export.Name && b.Status.APIExportClusterName == logicalcluster.From(export).String()
}
