package initializingworkspaces

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

// serveDiscovery answers the discovery documents of /clusters/*, which
// serves only logicalclusters.core.kcp.io, and tells whether segments
// named one.
func (h *handler) serveDiscovery(w http.ResponseWriter, req *http.Request, segments []string) bool {
	var obj runtime.Object
	switch {
	case equal(segments, "api"):
		obj = &metav1.APIVersions{Versions: []string{}}
	case equal(segments, "apis"):
		obj = &metav1.APIGroupList{Groups: []metav1.APIGroup{apiGroup()}}
	case equal(segments, "apis", corev1alpha1.GroupName):
		g := apiGroup()
		obj = &g
	case equal(segments, "apis", corev1alpha1.GroupName, corev1alpha1.SchemeGroupVersion.Version):
		obj = apiResources()
	default:
		return false
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		h.writeError(w, req, methodNotAllowed(req.Method))
		return true
	}
	responsewriters.WriteObjectNegotiated(h.codecs, negotiation.DefaultEndpointRestrictions, schema.GroupVersion{Version: "v1"}, w, req, http.StatusOK, obj, false)
	return true
}

func apiGroup() metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{
		GroupVersion: corev1alpha1.SchemeGroupVersion.String(),
		Version:      corev1alpha1.SchemeGroupVersion.Version,
	}
	return metav1.APIGroup{
		Name:             corev1alpha1.GroupName,
		Versions:         []metav1.GroupVersionForDiscovery{gv},
		PreferredVersion: gv,
	}
}

func apiResources() *metav1.APIResourceList {
	return &metav1.APIResourceList{
		GroupVersion: corev1alpha1.SchemeGroupVersion.String(),
		APIResources: []metav1.APIResource{
			{
				Name:         logicalClustersResource,
				SingularName: "logicalcluster",
				Namespaced:   false,
				Kind:         "LogicalCluster",
				Verbs:        metav1.Verbs{"get", "list", "watch"},
				ShortNames:   []string{"lc"},
				Categories:   []string{"kcp"},
			},
			{
				Name:       logicalClustersResource + "/status",
				Namespaced: false,
				Kind:       "LogicalCluster",
				Verbs:      metav1.Verbs{"get", "patch", "update"},
			},
		},
	}
}

func equal(segments []string, want ...string) bool {
	if len(segments) != len(want) {
		return false
	}
	for i := range want {
		if segments[i] != want[i] {
			return false
		}
	}
	return true
}
