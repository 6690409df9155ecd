package informers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestKeyFunc(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  any
		want string
	}{
		{"namespaced", configMap("a", "ns", "x", ""), "a|ns/x"},
		{"cluster-scoped", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{logicalcluster.AnnotationKey: "root:org"}}}, "root:org|ns"},
		{"no cluster annotation", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}}, "ns/x"},
		{"tombstone", cache.DeletedFinalStateUnknown{Key: "b|ns/x"}, "b|ns/x"},
		{"explicit key", cache.ExplicitKey("c|y"), "c|y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KeyFunc(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("KeyFunc = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := KeyFunc("not an object"); err == nil {
		t.Errorf("KeyFunc accepted an object without metadata")
	}
}

func TestToKeyAndSplitKey(t *testing.T) {
	for _, tc := range []struct {
		cluster         logicalcluster.Name
		namespace, name string
		key             string
	}{
		{"a", "ns", "x", "a|ns/x"},
		{"a", "", "x", "a|x"},
		{"root:org", "", "system:admin", "root:org|system:admin"},
		{"", "ns", "x", "ns/x"},
		{"", "", "x", "x"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := ToKey(tc.cluster, tc.namespace, tc.name); got != tc.key {
				t.Errorf("ToKey = %q, want %q", got, tc.key)
			}
			cluster, namespace, name, err := SplitKey(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if cluster != tc.cluster || namespace != tc.namespace || name != tc.name {
				t.Errorf("SplitKey(%q) = %q, %q, %q", tc.key, cluster, namespace, name)
			}
		})
	}
	for _, bad := range []string{"", "a|", "|ns/x", "a|b|x", "a|ns/x/y", "a|/x", "a|ns/"} {
		t.Run("invalid "+bad, func(t *testing.T) {
			if c, ns, n, err := SplitKey(bad); err == nil {
				t.Errorf("SplitKey(%q) = %q, %q, %q, want error", bad, c, ns, n)
			}
		})
	}
}

func TestIndexFuncs(t *testing.T) {
	cm := configMap("a", "ns", "x", "")
	if got, _ := ClusterIndexFunc(cm); len(got) != 1 || got[0] != "a" {
		t.Errorf("ClusterIndexFunc = %q", got)
	}
	if got, _ := ClusterNamespaceIndexFunc(cm); len(got) != 1 || got[0] != "a|ns" {
		t.Errorf("ClusterNamespaceIndexFunc = %q", got)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{logicalcluster.AnnotationKey: "a"}}}
	if got, _ := ClusterNamespaceIndexFunc(ns); len(got) != 0 {
		t.Errorf("ClusterNamespaceIndexFunc indexed a cluster-scoped object: %q", got)
	}
}

// configMap returns a ConfigMap in a logical cluster whose data records
// value, to tell same-named objects apart.
func configMap(cluster logicalcluster.Name, namespace, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Name:            name,
			Annotations:     map[string]string{logicalcluster.AnnotationKey: cluster.String()},
			ResourceVersion: "1",
		},
		Data: map[string]string{"value": value},
	}
}
