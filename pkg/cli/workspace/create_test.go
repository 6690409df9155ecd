package workspace

import (
	"testing"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
)

func TestParseTypeFlag(t *testing.T) {
	for _, tc := range []struct {
		flag     string
		wantNil  bool
		wantPath string
		wantName tenancyv1alpha1.WorkspaceTypeName
		wantErr  bool
	}{
		{flag: "", wantNil: true},
		{flag: "universal", wantName: "universal"},
		{flag: "root:organization", wantPath: "root", wantName: "organization"},
		{flag: "root:org:team-x", wantPath: "root:org", wantName: "team-x"},
		{flag: "root:", wantErr: true},
		{flag: ":team", wantErr: true},
		{flag: "Root:team", wantErr: true},
		{flag: "root:Team", wantErr: true},
		{flag: "root::team", wantErr: true},
		{flag: "1team", wantErr: true},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			ref, err := parseTypeFlag(tc.flag)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if (ref == nil) != tc.wantNil {
				t.Fatalf("got %+v, want nil %v", ref, tc.wantNil)
			}
			if ref != nil && (ref.Path != tc.wantPath || ref.Name != tc.wantName) {
				t.Errorf("got path %q name %q, want path %q name %q", ref.Path, ref.Name, tc.wantPath, tc.wantName)
			}
		})
	}
}

func TestSameType(t *testing.T) {
	ref := func(path, name string) *tenancyv1alpha1.WorkspaceTypeReference {
		return &tenancyv1alpha1.WorkspaceTypeReference{Path: path, Name: tenancyv1alpha1.WorkspaceTypeName(name)}
	}
	for _, tc := range []struct {
		name                string
		existing, requested *tenancyv1alpha1.WorkspaceTypeReference
		want                bool
	}{
		{name: "nothing requested", existing: ref("root", "team"), want: true},
		{name: "same", existing: ref("root", "team"), requested: ref("root", "team"), want: true},
		{name: "name only", existing: ref("root", "team"), requested: ref("", "team"), want: true},
		{name: "other name", existing: ref("root", "team"), requested: ref("", "universal")},
		{name: "other path", existing: ref("root", "team"), requested: ref("root:org", "team")},
		{name: "no existing type", requested: ref("", "team")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameType(tc.existing, tc.requested); got != tc.want {
				t.Errorf("sameType = %v, want %v", got, tc.want)
			}
		})
	}
}
