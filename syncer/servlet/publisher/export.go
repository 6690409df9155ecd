package publisher

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	servletpublished "github.com/tessera-dev/tessera/syncer/servlet/published"
)

// ensureExport creates the APIExport name listing schemas and claiming
// claims, or sets its latestResourceSchemas and permissionClaims to them.
func ensureExport(ctx context.Context, exports kcpclient.APIExportInterface, name string, schemas []string, claims []apisv1alpha1.PermissionClaim) error {
	schemas = slices.Sorted(slices.Values(schemas))
	export, err := exports.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = exports.Create(ctx, &apisv1alpha1.APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       apisv1alpha1.APIExportSpec{LatestResourceSchemas: schemas, PermissionClaims: claims},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if slices.Equal(export.Spec.LatestResourceSchemas, schemas) && equality.Semantic.DeepEqual(export.Spec.PermissionClaims, claims) {
		return nil
	}
	export = export.DeepCopy()
	export.Spec.LatestResourceSchemas = schemas
	export.Spec.PermissionClaims = claims
	_, err = exports.Update(ctx, export, metav1.UpdateOptions{})
	return err
}

// relatedClaims returns the claims on every resource the related objects
// of published have, sorted.
func relatedClaims(published []Published) []apisv1alpha1.PermissionClaim {
	var resources []string
	for _, p := range published {
		for _, r := range p.PublishedResource.Spec.Related {
			if gvr, ok := servletpublished.RelatedResources[r.Kind]; ok && !slices.Contains(resources, gvr.Resource) {
				resources = append(resources, gvr.Resource)
			}
		}
	}
	slices.Sort(resources)
	var claims []apisv1alpha1.PermissionClaim
	for _, r := range resources {
		claims = append(claims, apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: r}, All: true})
	}
	return claims
}
