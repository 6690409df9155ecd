package garbagecollector

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestGetOwner(t *testing.T) {
	b := &builtins{kinds: map[schema.GroupKind]kindInfo{
		{Kind: "ConfigMap"}: {resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, namespaced: true},
		{Kind: "Namespace"}: {resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
	}}
	for _, tc := range []struct {
		name      string
		namespace string
		ref       metav1.OwnerReference
		cached    []*apiextensionsv1.CustomResourceDefinition
		live      []*apiextensionsv1.CustomResourceDefinition
		liveErr   error
		// wantGet is the resource/namespace/name read, empty for none.
		wantGet      string
		wantNotFound bool
		wantErr      bool
	}{
		{name: "built-in namespaced owner", namespace: "ns", ref: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o"}, wantGet: "/v1/configmaps/ns/o"},
		{name: "built-in cluster-scoped owner of a namespaced dependent", namespace: "ns", ref: metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: "o"}, wantGet: "/v1/namespaces//o"},
		{name: "namespaced owner of a cluster-scoped dependent", ref: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o"}, wantNotFound: true},
		{name: "malformed apiVersion", ref: metav1.OwnerReference{APIVersion: "a/b/c", Kind: "X", Name: "o"}, wantNotFound: true},
		{
			name: "CRD from the cache", namespace: "ns", ref: metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "o"},
			cached: []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v1", "v1")}, liveErr: errors.New("must not be asked"),
			wantGet: "example.com/v1/widgets/ns/o",
		},
		{
			name: "CRD the cache misses", namespace: "ns", ref: metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "o"},
			live:    []*apiextensionsv1.CustomResourceDefinition{crd("a", true, "v1", "v1")},
			wantGet: "example.com/v1/widgets/ns/o",
		},
		{name: "kind the cluster does not serve", namespace: "ns", ref: metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "o"}, wantNotFound: true},
		{name: "CRD listing fails", namespace: "ns", ref: metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "o"}, liveErr: errors.New("boom"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			l := &ownerLookup{
				builtins: b,
				cachedCRDs: func(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
					return tc.cached, nil
				},
				liveCRDs: func(_ context.Context, cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
					return tc.live, tc.liveErr
				},
				get: func(_ context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error) {
					if cluster != "a" {
						t.Errorf("get in cluster %q, want a", cluster)
					}
					got = strings.Join([]string{gvr.Group, gvr.Version, gvr.Resource, namespace, name}, "/")
					return &metav1.PartialObjectMetadata{}, nil
				},
			}
			_, err := l.getOwner(t.Context(), "a", tc.namespace, tc.ref)
			switch {
			case tc.wantNotFound && !apierrors.IsNotFound(err):
				t.Errorf("getOwner() error = %v, want NotFound", err)
			case tc.wantErr && (err == nil || apierrors.IsNotFound(err)):
				t.Errorf("getOwner() error = %v, want a failure", err)
			case !tc.wantErr && !tc.wantNotFound && err != nil:
				t.Errorf("getOwner() error = %v", err)
			}
			if got != tc.wantGet {
				t.Errorf("read %q, want %q", got, tc.wantGet)
			}
		})
	}
}
