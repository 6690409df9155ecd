package apiexportendpointslices

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

// cowboys is the slice of the export today-cowboys in root:west, on the
// shards of the partition eu.
func cowboys(change ...func(*apisv1alpha1.APIExportEndpointSlice)) *apisv1alpha1.APIExportEndpointSlice {
	s := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboys-eu", ResourceVersion: "1"},
		Spec: apisv1alpha1.APIExportEndpointSliceSpec{
			APIExport: apisv1alpha1.ExportBindingReference{Path: "root:west", Name: "today-cowboys"},
			Partition: "eu",
		},
	}
	for _, c := range change {
		c(s)
	}
	return s
}

func TestValidate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	for _, tc := range []struct {
		name  string
		slice *apisv1alpha1.APIExportEndpointSlice
		want  []string // "<type> <field>"; none for a valid slice
	}{
		{name: "of a partition", slice: cowboys()},
		{name: "of all shards", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.Partition = "" })},
		{name: "of a local export", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.APIExport.Path = "" })},
		{name: "no export", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.APIExport = apisv1alpha1.ExportBindingReference{} }),
			want: []string{"FieldValueRequired spec.export.name"}},
		{name: "a bad export path", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.APIExport.Path = "root:" }),
			want: []string{"FieldValueInvalid spec.export.path"}},
		{name: "a bad export name", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.APIExport.Name = "today cowboys" }),
			want: []string{"FieldValueInvalid spec.export.name"}},
		{name: "a bad partition", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.Partition = "EU" }),
			want: []string{"FieldValueInvalid spec.partition"}},
		{name: "a name that is not a DNS subdomain", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Name = "cowboys_eu" }),
			want: []string{"FieldValueInvalid metadata.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := st.Validate(t.Context(), tc.slice)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	s := cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) {
		s.Generation = 4
		s.Status.APIExportEndpoints = []apisv1alpha1.APIExportEndpoint{{URL: "https://shard"}}
	})
	st.PrepareForCreate(t.Context(), s)
	if diff := cmp.Diff(apisv1alpha1.APIExportEndpointSliceStatus{}, s.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if s.Generation != 1 {
		t.Errorf("generation %d, want 1", s.Generation)
	}
}

// TestUpdate prepares and validates updates, as the API server does.
func TestUpdate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	stored := func(s *apisv1alpha1.APIExportEndpointSlice) {
		s.Generation = 2
		s.Status.APIExportEndpoints = []apisv1alpha1.APIExportEndpoint{{URL: "https://shard-1/services/apiexport/abc/today-cowboys"}}
		conditionsv1alpha1.MarkTrue(s, apisv1alpha1.PartitionValid)
	}
	for _, tc := range []struct {
		name           string
		slice          *apisv1alpha1.APIExportEndpointSlice
		want           []string
		wantGeneration int64
	}{
		{name: "a label", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Labels = map[string]string{"a": "b"} }), wantGeneration: 2},
		{name: "another partition", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.Partition = "us" }), wantGeneration: 3},
		{name: "no partition", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.Partition = "" }), wantGeneration: 3},
		{name: "another export", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.APIExport.Name = "yesterday-cowboys" }),
			want: []string{"FieldValueInvalid spec.export"}, wantGeneration: 3},
		{name: "another path", slice: cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Spec.APIExport.Path = "" }),
			want: []string{"FieldValueInvalid spec.export"}, wantGeneration: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cowboys(stored)
			s := tc.slice.DeepCopy()
			s.Generation = old.Generation // as rest.BeforeUpdate sets it
			s.Status = apisv1alpha1.APIExportEndpointSliceStatus{ShardSelector: "region=us"}
			st.PrepareForUpdate(t.Context(), s, old)
			if diff := cmp.Diff(old.Status, s.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if s.Generation != tc.wantGeneration {
				t.Errorf("generation %d, want %d", s.Generation, tc.wantGeneration)
			}
			errs := st.ValidateUpdate(t.Context(), s, old)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if len(tc.want) > 0 && !strings.Contains(errs.ToAggregate().Error(), "APIExport reference must not be changed") {
				t.Errorf("errors %v do not say the reference must not change", errs)
			}
		})
	}
}

func TestStatusUpdate(t *testing.T) {
	status := statusStrategy{newStrategy(runtime.NewScheme())}

	t.Run("keeps spec and metadata", func(t *testing.T) {
		old := cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) {
			s.Generation = 2
			s.Labels = map[string]string{"l": "old"}
		})
		managed := []metav1.ManagedFieldsEntry{{Manager: "endpointslice-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apis.kcp.io/v1alpha1", Subresource: "status"}}
		s := cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) {
			s.Generation = 2
			s.Labels = map[string]string{"l": "new"}
			s.Annotations = map[string]string{"a": "new"}
			s.ManagedFields = managed
			s.Spec = apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Name: "other"}}
			s.Status.ShardSelector = "region=eu"
		})
		status.PrepareForUpdate(t.Context(), s, old)
		if diff := cmp.Diff(old.Spec, s.Spec); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		want := old.ObjectMeta.DeepCopy()
		want.ManagedFields = managed
		if diff := cmp.Diff(*want, s.ObjectMeta); diff != "" {
			t.Errorf("metadata (-want +got):\n%s", diff)
		}
		if s.Status.ShardSelector != "region=eu" {
			t.Errorf("shard selector %q, want the new one", s.Status.ShardSelector)
		}
		if errs := status.ValidateUpdate(t.Context(), s, old); len(errs) > 0 {
			t.Errorf("setting the status: %v", errs)
		}
	})

	for _, tc := range []struct {
		name      string
		endpoints []apisv1alpha1.APIExportEndpoint
		want      []string
	}{
		{name: "two shards", endpoints: []apisv1alpha1.APIExportEndpoint{{URL: "https://shard-1"}, {URL: "https://shard-2"}}},
		{name: "no URL", endpoints: []apisv1alpha1.APIExportEndpoint{{URL: "https://shard-1"}, {}},
			want: []string{"FieldValueRequired status.endpoints[1].url"}},
		{name: "a URL twice", endpoints: []apisv1alpha1.APIExportEndpoint{{URL: "https://shard-1"}, {URL: "https://shard-1"}},
			want: []string{"FieldValueDuplicate status.endpoints[1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cowboys()
			s := cowboys(func(s *apisv1alpha1.APIExportEndpointSlice) { s.Status.APIExportEndpoints = tc.endpoints })
			status.PrepareForUpdate(t.Context(), s, old)
			errs := status.ValidateUpdate(t.Context(), s, old)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestResetFields(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	storetest.CheckStatusResetFields(t, "apis.kcp.io/v1alpha1", s, statusStrategy{s})
}
