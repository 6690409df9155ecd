package publisher

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// ensureExport creates the APIExport name listing schemas, or sets its
// latestResourceSchemas to them.
func ensureExport(ctx context.Context, exports kcpclient.APIExportInterface, name string, schemas []string) error {
	schemas = slices.Sorted(slices.Values(schemas))
	export, err := exports.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = exports.Create(ctx, &apisv1alpha1.APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       apisv1alpha1.APIExportSpec{LatestResourceSchemas: schemas},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if slices.Equal(export.Spec.LatestResourceSchemas, schemas) {
		return nil
	}
	export = export.DeepCopy()
	export.Spec.LatestResourceSchemas = schemas
	_, err = exports.Update(ctx, export, metav1.UpdateOptions{})
	return err
}
