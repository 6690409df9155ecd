package shards

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func newShard(mutate func(*corev1alpha1.Shard)) *corev1alpha1.Shard {
	s := &corev1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: "root", ResourceVersion: "1"},
		Spec:       corev1alpha1.ShardSpec{BaseURL: "https://root.shard:6443"},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

// fieldsOf returns the field of each error of errs.
func fieldsOf(errs field.ErrorList) []string {
	var fields []string
	for _, err := range errs {
		fields = append(fields, err.Field)
	}
	return fields
}

// inRoot returns a request context of the root logical cluster.
func inRoot(t *testing.T) context.Context {
	return logicalcluster.WithCluster(t.Context(), logicalcluster.Cluster{Name: logicalcluster.Root})
}

func TestValidate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	tests := []struct {
		name       string
		shard      *corev1alpha1.Shard
		wantFields []string // empty: valid
	}{
		{name: "base URL only", shard: newShard(nil)},
		{name: "http base URL", shard: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "http://127.0.0.1:6443" }),
			wantFields: []string{"spec.baseURL"}},
		{name: "http external and virtual workspace URLs", shard: newShard(func(s *corev1alpha1.Shard) {
			s.Spec.ExternalURL = "http://proxy.example.com"
			s.Spec.VirtualWorkspaceURL = "http://vw.example.com"
		}), wantFields: []string{"spec.externalURL", "spec.virtualWorkspaceURL"}},
		{name: "all URLs", shard: newShard(func(s *corev1alpha1.Shard) {
			s.Spec.ExternalURL = "https://proxy.example.com:443"
			s.Spec.VirtualWorkspaceURL = "https://vw.example.com"
		})},
		{name: "no base URL", shard: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "" }),
			wantFields: []string{"spec.baseURL"}},
		{name: "relative base URL", shard: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "root.shard:6443/x" }),
			wantFields: []string{"spec.baseURL"}},
		{name: "base URL of another scheme", shard: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "ftp://root.shard" }),
			wantFields: []string{"spec.baseURL"}},
		{name: "unparsable URL", shard: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "https://[::1" }),
			wantFields: []string{"spec.baseURL"}},
		{name: "invalid other URLs", shard: newShard(func(s *corev1alpha1.Shard) {
			s.Spec.ExternalURL = "/proxy"
			s.Spec.VirtualWorkspaceURL = "vw"
		}), wantFields: []string{"spec.externalURL", "spec.virtualWorkspaceURL"}},
		{name: "invalid name", shard: newShard(func(s *corev1alpha1.Shard) { s.Name = "Root" }),
			wantFields: []string{"metadata.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := s.Validate(inRoot(t), tt.shard)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}

	old := newShard(nil)
	for _, tt := range []struct {
		name       string
		upd        *corev1alpha1.Shard
		wantFields []string
	}{
		{name: "no base URL", upd: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "" }), wantFields: []string{"spec.baseURL"}},
		{name: "http base URL", upd: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "http://root.shard:6443" }), wantFields: []string{"spec.baseURL"}},
		{name: "new https base URL", upd: newShard(func(s *corev1alpha1.Shard) { s.Spec.BaseURL = "https://new.shard:6443" })},
	} {
		t.Run("update: "+tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantFields, fieldsOf(s.ValidateUpdate(inRoot(t), tt.upd, old))); diff != "" {
				t.Errorf("update error fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateCluster(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	tests := []struct {
		name    string
		cluster *logicalcluster.Cluster // nil: none in the context
		allowed bool
	}{
		{name: "root", cluster: &logicalcluster.Cluster{Name: logicalcluster.Root}, allowed: true},
		{name: "an organization", cluster: &logicalcluster.Cluster{Name: "orgc"}},
		{name: "a system cluster", cluster: &logicalcluster.Cluster{Name: logicalcluster.SystemAdmin}},
		{name: "wildcard", cluster: &logicalcluster.Cluster{Wildcard: true}},
		{name: "no cluster", cluster: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.cluster != nil {
				ctx = logicalcluster.WithCluster(ctx, *tt.cluster)
			}
			errs := s.Validate(ctx, newShard(nil))
			if tt.allowed {
				if len(errs) != 0 {
					t.Errorf("refused in %s: %v", tt.name, errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Type != field.ErrorTypeForbidden || errs[0].Field != "metadata" ||
				errs[0].Detail != "Shard objects live in the root logical cluster" {
				t.Errorf("errors %v, want metadata forbidden: Shard objects live in the root logical cluster", errs)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	capacity := corev1alpha1.ShardStatus{Capacity: corev1.ResourceList{"logicalclusters": resource.MustParse("100")}}

	created := newShard(func(s *corev1alpha1.Shard) { s.Status = capacity })
	s.PrepareForCreate(t.Context(), created)
	want := corev1alpha1.ShardSpec{BaseURL: "https://root.shard:6443", ExternalURL: "https://root.shard:6443", VirtualWorkspaceURL: "https://root.shard:6443"}
	if diff := cmp.Diff(want, created.Spec); diff != "" {
		t.Errorf("spec after create (-want +got):\n%s", diff)
	}
	if created.Status.Capacity != nil {
		t.Errorf("status of the request kept: %v", created.Status)
	}

	// Set URLs are kept; an emptied one follows the base URL again.
	old := newShard(func(s *corev1alpha1.Shard) { s.Status = capacity })
	upd := newShard(func(s *corev1alpha1.Shard) {
		s.Spec.BaseURL = "https://new.shard:6443"
		s.Spec.ExternalURL = "https://proxy.example.com"
	})
	s.PrepareForUpdate(t.Context(), upd, old)
	want = corev1alpha1.ShardSpec{BaseURL: "https://new.shard:6443", ExternalURL: "https://proxy.example.com", VirtualWorkspaceURL: "https://new.shard:6443"}
	if diff := cmp.Diff(want, upd.Spec); diff != "" {
		t.Errorf("spec after update (-want +got):\n%s", diff)
	}
	if len(upd.Status.Capacity) != 1 {
		t.Errorf("status after update %v, want the stored one", upd.Status)
	}
}

func TestStatusUpdate(t *testing.T) {
	status := statusStrategy{newStrategy(runtime.NewScheme())}
	old := newShard(func(s *corev1alpha1.Shard) {
		s.Labels = map[string]string{"region": "eu"}
		s.Spec.ExternalURL = "https://proxy"
	})
	upd := newShard(func(s *corev1alpha1.Shard) {
		s.Labels = map[string]string{"region": "us"}
		s.Spec.BaseURL = "https://elsewhere"
		s.Status.Capacity = corev1.ResourceList{"logicalclusters": resource.MustParse("5")}
	})
	status.PrepareForUpdate(t.Context(), upd, old)
	if diff := cmp.Diff(old.Spec, upd.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if upd.Labels["region"] != "eu" || len(upd.Status.Capacity) != 1 {
		t.Errorf("labels %v and status %v, want the stored labels and the new status", upd.Labels, upd.Status)
	}
	if errs := status.ValidateUpdate(t.Context(), upd, old); len(errs) != 0 {
		t.Errorf("status update: %v", errs)
	}
}

// path returns the field path of names.
func path(names ...string) fieldpath.Path {
	elements := make([]interface{}, len(names))
	for i, n := range names {
		elements[i] = n
	}
	return fieldpath.MakePathOrDie(elements...)
}

func TestResetFields(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	version := fieldpath.APIVersion("core.kcp.io/v1alpha1")
	if got := s.GetResetFields()[version]; got == nil || !got.Has(path("status")) || got.Has(path("spec")) {
		t.Errorf("writes reset %v, want status", got)
	}
	got := statusStrategy{s}.GetResetFields()[version]
	if got == nil || !got.Has(path("spec")) || got.Has(path("status")) {
		t.Errorf("status writes reset %v, want spec and not status", got)
	}
}
