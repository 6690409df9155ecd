package syncer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// ImportExport is the APIExport of the SyncTarget's workspace that the
// syncer adds imported resources to, kcp's name for a compute service's
// export.
const ImportExport = "kubernetes"

// importResources makes the custom resources of the physical cluster named
// by --resources (resource.group, a CRD's name) APIs of the SyncTarget's
// workspace, as kcp's syncer imports them: each CRD becomes an
// APIResourceSchema i<hash of the CRD's spec>.<plural>.<group>, listed in
// the workspace's APIExport kubernetes (created when missing, replacing an
// older schema of the same resource), and the SyncTarget supports that
// export. The shard then lists the resources in the SyncTarget's synced
// resources, the syncer accepts them like the others, and workspaces that
// bind the export use them. Built-in Kubernetes resources are not
// imported: they come with root:compute's export kubernetes.
func (s *Syncer) importResources(ctx context.Context) error {
	crds, err := apiextensionsclientset.NewForConfig(s.downstreamConfig)
	if err != nil {
		return err
	}
	kcp, err := kcpclient.NewForConfig(s.upstream)
	if err != nil {
		return err
	}
	var names []string
	for _, r := range s.opts.Resources {
		crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, r, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("--resources %s: the physical cluster has no CustomResourceDefinition %s (only custom resources are imported; Kubernetes' own come with root:compute's APIExport kubernetes)", r, r)
		}
		if err != nil {
			return fmt.Errorf("--resources %s: reading its CustomResourceDefinition: %w", r, err)
		}
		spec, err := json.Marshal(crd.Spec)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(spec)
		schema, err := apisv1alpha1.SchemaFromCRD(crd, "i"+hex.EncodeToString(sum[:5]))
		if err != nil {
			return fmt.Errorf("--resources %s: %w", r, err)
		}
		if _, err := kcp.APIResourceSchemas().Create(ctx, schema, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("--resources %s: creating APIResourceSchema %s: %w", r, schema.Name, err)
		}
		names = append(names, schema.Name)
	}

	export, err := kcp.APIExports().Get(ctx, ImportExport, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		export = &apisv1alpha1.APIExport{ObjectMeta: metav1.ObjectMeta{Name: ImportExport}, Spec: apisv1alpha1.APIExportSpec{LatestResourceSchemas: names}}
		if _, err := kcp.APIExports().Create(ctx, export, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating APIExport %s: %w", ImportExport, err)
		}
	case err != nil:
		return err
	default:
		latest := mergeSchemaNames(export.Spec.LatestResourceSchemas, names)
		if !slices.Equal(latest, export.Spec.LatestResourceSchemas) {
			export.Spec.LatestResourceSchemas = latest
			if _, err := kcp.APIExports().Update(ctx, export, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("adding the imported schemas to APIExport %s: %w", ImportExport, err)
			}
		}
	}

	st, err := s.syncTargets.Get(ctx, s.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	target := &workloadv1alpha1.SyncTarget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(st.Object, target); err != nil {
		return err
	}
	for _, ref := range target.Spec.SupportedAPIExports {
		if ref.Export == ImportExport && (ref.Path == "" || ref.Path == s.Cluster.String()) {
			klog.FromContext(ctx).Info("Imported resources", "resources", s.opts.Resources, "schemas", names)
			return nil
		}
	}
	target.Spec.SupportedAPIExports = append(target.Spec.SupportedAPIExports, tenancyv1alpha1.APIExportReference{Export: ImportExport})
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(target)
	if err != nil {
		return err
	}
	if _, err := s.syncTargets.Update(ctx, &unstructured.Unstructured{Object: u}, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("adding APIExport %s to the SyncTarget's supported exports: %w", ImportExport, err)
	}
	klog.FromContext(ctx).Info("Imported resources", "resources", s.opts.Resources, "schemas", names)
	return nil
}

// mergeSchemaNames adds the schemas of names to current, each replacing a
// schema of the same resource (<prefix>.<plural>.<group>).
func mergeSchemaNames(current, names []string) []string {
	resource := func(name string) string {
		_, rest, _ := strings.Cut(name, ".")
		return rest
	}
	out := slices.Clone(current)
	for _, n := range names {
		i := slices.IndexFunc(out, func(c string) bool { return resource(c) == resource(n) })
		if i >= 0 {
			out[i] = n
		} else {
			out = append(out, n)
		}
	}
	return out
}
