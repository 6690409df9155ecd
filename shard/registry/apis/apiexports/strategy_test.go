package apiexports

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

// hash is an identity hash.
const hash = "4f7a7b9e1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f"

// cowboys is the export of the seed's schema, with a claim of configmaps.
func cowboys(change ...func(*apisv1alpha1.APIExport)) *apisv1alpha1.APIExport {
	e := &apisv1alpha1.APIExport{
		ObjectMeta: metav1.ObjectMeta{Name: "today-cowboys", ResourceVersion: "1"},
		Spec: apisv1alpha1.APIExportSpec{
			LatestResourceSchemas: []string{"v220920-6039d110.cowboys.wildwest.dev"},
			PermissionClaims: []apisv1alpha1.PermissionClaim{
				{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true},
			},
		},
	}
	for _, c := range change {
		c(e)
	}
	return e
}

// claim returns a claim of resource.group that claims all objects.
func claim(group, resource, identityHash string) apisv1alpha1.PermissionClaim {
	return apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Group: group, Resource: resource}, All: true, IdentityHash: identityHash}
}

// withClaims sets the claims of an export.
func withClaims(claims ...apisv1alpha1.PermissionClaim) func(*apisv1alpha1.APIExport) {
	return func(e *apisv1alpha1.APIExport) { e.Spec.PermissionClaims = claims }
}

func TestValidate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	selector := func(sel ...apisv1alpha1.ResourceSelector) func(*apisv1alpha1.APIExport) {
		return func(e *apisv1alpha1.APIExport) {
			c := claim("", "secrets", "")
			c.All, c.ResourceSelector = false, sel
			e.Spec.PermissionClaims = []apisv1alpha1.PermissionClaim{c}
		}
	}
	for _, tc := range []struct {
		name   string
		export *apisv1alpha1.APIExport
		want   []string // "<type> <field>"; none for a valid export
		detail string
	}{
		{name: "the seed's export", export: cowboys()},
		{name: "empty", export: cowboys(func(e *apisv1alpha1.APIExport) { e.Spec = apisv1alpha1.APIExportSpec{} })},
		{name: "everything", export: cowboys(func(e *apisv1alpha1.APIExport) {
			e.Spec.LatestResourceSchemas = append(e.Spec.LatestResourceSchemas, "v1.sheriffs.wildwest.dev", "v1.widgets.core", "v1.deployments.apps")
			e.Spec.Identity = &apisv1alpha1.Identity{SecretRef: &corev1.SecretReference{Namespace: "kcp-system", Name: "today-cowboys"}}
			e.Spec.MaximalPermissionPolicy = &apisv1alpha1.MaximalPermissionPolicy{Local: &apisv1alpha1.LocalAPIExportPolicy{}}
			e.Spec.PermissionClaims = append(e.Spec.PermissionClaims,
				claim("rbac.authorization.k8s.io", "roles", ""),
				claim("apis.kcp.io", "apibindings", ""),
				claim("core.kcp.io", "logicalclusters", ""),
				claim("wildwest.dev", "horses", hash),
				claim("", "pods", hash),
				apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, ResourceSelector: []apisv1alpha1.ResourceSelector{
					{Name: "creds"}, {Namespace: "west"}, {Name: "tls.crt_2", Namespace: "west"},
				}},
			)
		})},
		{name: "a name that is not a DNS subdomain", export: cowboys(func(e *apisv1alpha1.APIExport) { e.Name = "Cowboys" }),
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "namespaced", export: cowboys(func(e *apisv1alpha1.APIExport) { e.Namespace = "default" }),
			want: []string{"FieldValueForbidden metadata.namespace"}},

		{name: "a schema name without group", export: cowboys(func(e *apisv1alpha1.APIExport) { e.Spec.LatestResourceSchemas = []string{"v1.cowboys"} }),
			want: []string{"FieldValueInvalid spec.latestResourceSchemas[0]"}, detail: "<prefix>.<plural>.<group>"},
		{name: "a schema name with a bad prefix", export: cowboys(func(e *apisv1alpha1.APIExport) {
			e.Spec.LatestResourceSchemas = []string{"1v.cowboys.wildwest.dev"}
		}), want: []string{"FieldValueInvalid spec.latestResourceSchemas[0]"}, detail: "prefix"},
		{name: "a schema listed twice", export: cowboys(func(e *apisv1alpha1.APIExport) {
			e.Spec.LatestResourceSchemas = append(e.Spec.LatestResourceSchemas, e.Spec.LatestResourceSchemas[0])
		}), want: []string{"FieldValueDuplicate spec.latestResourceSchemas[1]"}},
		{name: "two schemas of one resource", export: cowboys(func(e *apisv1alpha1.APIExport) {
			e.Spec.LatestResourceSchemas = append(e.Spec.LatestResourceSchemas, "v2.cowboys.wildwest.dev")
		}), want: []string{"FieldValueInvalid spec.latestResourceSchemas[1]"}, detail: "v220920-6039d110.cowboys.wildwest.dev also serves cowboys.wildwest.dev"},

		{name: "a secret without namespace and name", export: cowboys(func(e *apisv1alpha1.APIExport) {
			e.Spec.Identity = &apisv1alpha1.Identity{SecretRef: &corev1.SecretReference{}}
		}), want: []string{"FieldValueRequired spec.identity.secretRef.namespace", "FieldValueRequired spec.identity.secretRef.name"}},
		{name: "an identity without secret", export: cowboys(func(e *apisv1alpha1.APIExport) { e.Spec.Identity = &apisv1alpha1.Identity{} })},
		{name: "a policy that is not local", export: cowboys(func(e *apisv1alpha1.APIExport) {
			e.Spec.MaximalPermissionPolicy = &apisv1alpha1.MaximalPermissionPolicy{}
		}), want: []string{"FieldValueRequired spec.maximalPermissionPolicy.local"}},

		{name: "a claim without resource", export: cowboys(withClaims(claim("", "", ""))),
			want: []string{"FieldValueRequired spec.permissionClaims[0].resource"}},
		{name: "a resource of upper case", export: cowboys(withClaims(claim("", "ConfigMaps", ""))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].resource", "FieldValueInvalid spec.permissionClaims[0].identityHash"}, detail: "should match '^[a-z][-a-z0-9]*[a-z0-9]$'"},
		{name: "a resource of one letter", export: cowboys(withClaims(claim("wildwest.dev", "x", hash))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].resource"}},
		{name: "a bad group", export: cowboys(withClaims(claim("wild_west.dev", "horses", hash))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].group"}},
		{name: "two claims of one resource", export: cowboys(withClaims(claim("wildwest.dev", "horses", hash), claim("wildwest.dev", "horses", strings.Repeat("a", 64)))),
			want: []string{"FieldValueDuplicate spec.permissionClaims[1]"}},
		{name: "claims of one resource in two groups", export: cowboys(withClaims(claim("", "events", ""), claim("events.k8s.io", "events", "")))},
		{name: "a claim of a custom resource without identity", export: cowboys(withClaims(claim("wildwest.dev", "horses", ""))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].identityHash"}, detail: "identityHash is required for API types that are not built-in"},
		{name: "a claim of a core resource kcp does not serve to claims", export: cowboys(withClaims(claim("", "pods", ""))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].identityHash"}},
		{name: "a short identity hash", export: cowboys(withClaims(claim("wildwest.dev", "horses", "abc"))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].identityHash"}, detail: "64 lower-case hex digits"},
		{name: "an upper-case identity hash", export: cowboys(withClaims(claim("wildwest.dev", "horses", strings.ToUpper(hash)))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].identityHash"}},
		{name: "neither all nor selectors", export: cowboys(selector()),
			want: []string{"FieldValueInvalid spec.permissionClaims[0]"}, detail: `either "all" or "resourceSelector" must be set`},
		{name: "all and selectors", export: cowboys(func(e *apisv1alpha1.APIExport) {
			selector(apisv1alpha1.ResourceSelector{Name: "creds"})(e)
			e.Spec.PermissionClaims[0].All = true
		}), want: []string{"FieldValueInvalid spec.permissionClaims[0]"}},
		{name: "an empty selector", export: cowboys(selector(apisv1alpha1.ResourceSelector{Name: "creds"}, apisv1alpha1.ResourceSelector{})),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].resourceSelector[1]"}, detail: "at least one field must be set"},
		{name: "a selector of a bad name", export: cowboys(selector(apisv1alpha1.ResourceSelector{Name: "-creds"})),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].resourceSelector[0].name"}},
		{name: "a selector of a long name", export: cowboys(selector(apisv1alpha1.ResourceSelector{Name: strings.Repeat("a", 254)})),
			want: []string{"FieldValueTooLong spec.permissionClaims[0].resourceSelector[0].name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := s.Validate(t.Context(), tc.export)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.detail != "" && !strings.Contains(errs.ToAggregate().Error(), tc.detail) {
				t.Errorf("errors %v do not say %q", errs, tc.detail)
			}
			// An update validates the spec alike.
			old := cowboys()
			updated := tc.export.DeepCopy()
			updated.Name, updated.Namespace = old.Name, old.Namespace
			errs = s.ValidateUpdate(t.Context(), updated, old)
			var want []string
			for _, w := range tc.want {
				if !strings.Contains(w, " metadata.") {
					want = append(want, w)
				}
			}
			if diff := cmp.Diff(want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors of an update (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestValidateReference(t *testing.T) {
	p := field.NewPath("spec", "reference", "export")
	for _, tc := range []struct {
		name string
		ref  apisv1alpha1.ExportBindingReference
		want []string
	}{
		{name: "local", ref: apisv1alpha1.ExportBindingReference{Name: "today-cowboys"}},
		{name: "by path", ref: apisv1alpha1.ExportBindingReference{Path: "root:org:west", Name: "today-cowboys"}},
		{name: "by logical cluster name", ref: apisv1alpha1.ExportBindingReference{Path: "2x8kvl0cmzhx", Name: "today-cowboys"}},
		{name: "no name", ref: apisv1alpha1.ExportBindingReference{Path: "root"}, want: []string{"FieldValueRequired spec.reference.export.name"}},
		{name: "a name that is no DNS subdomain", ref: apisv1alpha1.ExportBindingReference{Name: "Today_Cowboys"}, want: []string{"FieldValueInvalid spec.reference.export.name"}},
		{name: "an empty segment", ref: apisv1alpha1.ExportBindingReference{Path: "root::org", Name: "a"}, want: []string{"FieldValueInvalid spec.reference.export.path"}},
		{name: "a path of upper case", ref: apisv1alpha1.ExportBindingReference{Path: "root:Org", Name: "a"}, want: []string{"FieldValueInvalid spec.reference.export.path"}},
		{name: "a path with a slash", ref: apisv1alpha1.ExportBindingReference{Path: "root/org", Name: "a"}, want: []string{"FieldValueInvalid spec.reference.export.path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateReference(tc.ref, p)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	e := cowboys(func(e *apisv1alpha1.APIExport) {
		e.Generation = 7
		e.Status = apisv1alpha1.APIExportStatus{IdentityHash: hash, VirtualWorkspaces: []apisv1alpha1.VirtualWorkspace{{URL: "https://shard"}}}
	})
	s.PrepareForCreate(t.Context(), e)
	if diff := cmp.Diff(apisv1alpha1.APIExportStatus{}, e.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if e.Generation != 1 {
		t.Errorf("generation %d, want 1", e.Generation)
	}
	if diff := cmp.Diff(cowboys().Spec, e.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestPrepareForUpdate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	stored := func(e *apisv1alpha1.APIExport) {
		e.Generation = 3
		e.Status.IdentityHash = hash
		conditionsv1alpha1.MarkTrue(e, apisv1alpha1.APIExportIdentityValid)
	}

	t.Run("keeps the status", func(t *testing.T) {
		old := cowboys(stored)
		e := cowboys(func(e *apisv1alpha1.APIExport) {
			e.Generation = 3
			e.Labels = map[string]string{"a": "b"}
			e.Status = apisv1alpha1.APIExportStatus{IdentityHash: strings.Repeat("0", 64)}
		})
		s.PrepareForUpdate(t.Context(), e, old)
		if diff := cmp.Diff(old.Status, e.Status); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if e.Generation != 3 {
			t.Errorf("generation %d after a change of labels only, want 3", e.Generation)
		}
		if e.Labels["a"] != "b" {
			t.Errorf("labels %v, want the new ones", e.Labels)
		}
	})

	t.Run("a change of the spec bumps the generation", func(t *testing.T) {
		old := cowboys(stored)
		e := cowboys(func(e *apisv1alpha1.APIExport) {
			e.Generation = 3
			e.Spec.LatestResourceSchemas = []string{"v2.cowboys.wildwest.dev"}
		})
		s.PrepareForUpdate(t.Context(), e, old)
		if e.Generation != 4 {
			t.Errorf("generation %d, want 4", e.Generation)
		}
		if diff := cmp.Diff([]string{"v2.cowboys.wildwest.dev"}, e.Spec.LatestResourceSchemas); diff != "" {
			t.Errorf("schemas (-want +got):\n%s", diff)
		}
	})
}

func TestStatusUpdate(t *testing.T) {
	status := statusStrategy{newStrategy(runtime.NewScheme())}

	t.Run("keeps spec and metadata", func(t *testing.T) {
		old := cowboys(func(e *apisv1alpha1.APIExport) {
			e.Generation = 2
			e.Labels = map[string]string{"l": "old"}
			e.Annotations = map[string]string{"a": "old"}
			e.Finalizers = []string{"apis.kcp.io/old"}
		})
		managed := []metav1.ManagedFieldsEntry{{Manager: "identity-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apis.kcp.io/v1alpha1", Subresource: "status"}}
		e := cowboys(func(e *apisv1alpha1.APIExport) {
			e.Generation = 2
			e.Spec.LatestResourceSchemas = nil
			e.Labels = map[string]string{"l": "new"}
			e.Annotations = map[string]string{"a": "new"}
			e.ManagedFields = managed
			e.Status.IdentityHash = hash
		})
		status.PrepareForUpdate(t.Context(), e, old)
		if diff := cmp.Diff(old.Spec, e.Spec); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		want := old.ObjectMeta.DeepCopy()
		want.ManagedFields = managed
		if diff := cmp.Diff(*want, e.ObjectMeta); diff != "" {
			t.Errorf("metadata (-want +got):\n%s", diff)
		}
		if e.Status.IdentityHash != hash {
			t.Errorf("identity hash %q, want the new one", e.Status.IdentityHash)
		}
		if errs := status.ValidateUpdate(t.Context(), e, old); len(errs) > 0 {
			t.Errorf("setting the identity hash: %v", errs)
		}
	})

	withHash := func(h string) func(*apisv1alpha1.APIExport) {
		return func(e *apisv1alpha1.APIExport) { e.Status.IdentityHash = h }
	}
	for _, tc := range []struct {
		name    string
		old, e  *apisv1alpha1.APIExport
		want    []string
		message string
	}{
		{name: "the hash set", old: cowboys(), e: cowboys(withHash(hash))},
		{name: "the hash kept", old: cowboys(withHash(hash)), e: cowboys(withHash(hash), func(e *apisv1alpha1.APIExport) {
			conditionsv1alpha1.MarkTrue(e, apisv1alpha1.APIExportIdentityValid)
		})},
		{name: "the hash changed", old: cowboys(withHash(hash)), e: cowboys(withHash(strings.Repeat("0", 64))),
			want: []string{"FieldValueInvalid status.identityHash"}, message: "immutable"},
		{name: "the hash removed", old: cowboys(withHash(hash)), e: cowboys(),
			want: []string{"FieldValueInvalid status.identityHash"}, message: "immutable"},
		{name: "a hash that is not one", old: cowboys(), e: cowboys(withHash("secret")),
			want: []string{"FieldValueInvalid status.identityHash"}, message: "hex"},
		{name: "a virtual workspace without URL", old: cowboys(), e: cowboys(func(e *apisv1alpha1.APIExport) {
			e.Status.VirtualWorkspaces = []apisv1alpha1.VirtualWorkspace{{URL: "https://shard/services/apiexport/x/today-cowboys"}, {}}
		}), want: []string{"FieldValueRequired status.virtualWorkspaces[1].url"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status.PrepareForUpdate(t.Context(), tc.e, tc.old)
			errs := status.ValidateUpdate(t.Context(), tc.e, tc.old)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.message != "" && !strings.Contains(errs.ToAggregate().Error(), tc.message) {
				t.Errorf("errors %v do not say %q", errs, tc.message)
			}
		})
	}
}

func TestResetFields(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	storetest.CheckStatusResetFields(t, "apis.kcp.io/v1alpha1", s, statusStrategy{s})
}
