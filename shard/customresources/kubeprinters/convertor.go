// Package kubeprinters prints the bound resources of Kubernetes kinds (a
// compute service's Deployments, Pods, Services, Endpoints and Ingresses,
// served as custom resources) in the tables kube-apiserver prints for those
// kinds, instead of the JSONPath columns of their schemas: READY of a
// Deployment is "1/1", a Pod's STATUS follows its containers.
package kubeprinters

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// ForKind returns the table convertor of the unstructured objects of kind,
// or nil when kind is not one of the Kubernetes kinds printed here.
func ForKind(kind schema.GroupVersionKind) rest.TableConvertor {
	var typed rest.TableConvertor
	switch kind {
	case appsv1.SchemeGroupVersion.WithKind("Deployment"):
		typed = deploymentsTable()
	case corev1.SchemeGroupVersion.WithKind("Pod"):
		typed = podsTable()
	case corev1.SchemeGroupVersion.WithKind("Service"):
		typed = servicesTable()
	case corev1.SchemeGroupVersion.WithKind("Endpoints"):
		typed = endpointsTable()
	case networkingv1.SchemeGroupVersion.WithKind("Ingress"):
		typed = ingressesTable()
	default:
		return nil
	}
	return unstructuredTable{kind: kind, typed: typed}
}

// unstructuredTable prints unstructured objects of a Kubernetes kind, or
// lists of them, through the convertor of the kind's Go type. The rows
// carry the unstructured objects, as the custom resource's own convertor
// would, for the API server to return them as the request asks.
type unstructuredTable struct {
	kind  schema.GroupVersionKind
	typed rest.TableConvertor
}

var _ rest.TableConvertor = unstructuredTable{}

func (t unstructuredTable) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	kind := t.kind
	var content map[string]any
	var items []runtime.Object
	switch o := object.(type) {
	case *unstructured.Unstructured:
		content = o.Object
		items = []runtime.Object{o}
	case *unstructured.UnstructuredList:
		kind = kind.GroupVersion().WithKind(kind.Kind + "List")
		content = o.UnstructuredContent()
		for i := range o.Items {
			items = append(items, &o.Items[i])
		}
	default:
		return nil, fmt.Errorf("cannot print %T in a table of %s", object, t.kind)
	}
	typed, err := clientgoscheme.Scheme.New(kind)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, typed); err != nil {
		return nil, fmt.Errorf("converting to %s: %w", kind, err)
	}
	table, err := t.typed.ConvertToTable(ctx, typed, tableOptions)
	if err != nil {
		return nil, err
	}
	if len(table.Rows) != len(items) {
		return nil, fmt.Errorf("printing %s: %d rows for %d objects", kind, len(table.Rows), len(items))
	}
	for i := range table.Rows {
		table.Rows[i].Object = runtime.RawExtension{Object: items[i]}
	}
	return table, nil
}
