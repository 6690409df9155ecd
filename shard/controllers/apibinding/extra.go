package apibinding

import (
	"maps"
	"strings"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ExtraAnnotationPrefix marks the annotations of an APIExport that its
// bindings carry too, as kcp copies them: e.g.
// extra.apis.kcp.io/compute.workload.kcp.io marks a compute service's
// export, and so the bindings to it.
const ExtraAnnotationPrefix = "extra.apis.kcp.io/"

// withExtraAnnotations returns b's annotations with the extra annotations
// of export (nil export: none) in place of b's own, and whether they
// differ from b's.
func withExtraAnnotations(b *apisv1alpha1.APIBinding, export *apisv1alpha1.APIExport) (map[string]string, bool) {
	out := map[string]string{}
	for k, v := range b.Annotations {
		if !strings.HasPrefix(k, ExtraAnnotationPrefix) {
			out[k] = v
		}
	}
	if export != nil {
		for k, v := range export.Annotations {
			if strings.HasPrefix(k, ExtraAnnotationPrefix) {
				out[k] = v
			}
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, !maps.Equal(out, b.Annotations)
}

// boundExport returns the export b is bound to, once it is: the export of
// status.apiExportClusterName named in the reference.
func (c *Controller) boundExport(b *apisv1alpha1.APIBinding) *apisv1alpha1.APIExport {
	ref := b.Spec.Reference.Export
	if ref == nil || b.Status.APIExportClusterName == "" {
		return nil
	}
	e, err := c.exports.Lister().Cluster(logicalcluster.Name(b.Status.APIExportClusterName)).Get(ref.Name)
	if err != nil {
		return nil
	}
	return e
}
