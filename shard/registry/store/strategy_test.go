package store

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func validateName(cm *corev1.ConfigMap) field.ErrorList {
	if cm.Name == "" {
		return field.ErrorList{field.Required(field.NewPath("metadata", "name"), "")}
	}
	return nil
}

func validateNameUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	if cm.Name != old.Name {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), cm.Name, "immutable")}
	}
	return validateName(cm)
}

func TestStrategy(t *testing.T) {
	ctx := t.Context()
	namespaced := NewStrategy(runtime.NewScheme(), Namespaced, validateName, validateNameUpdate)
	if !namespaced.NamespaceScoped() {
		t.Error("Namespaced strategy is not namespace scoped")
	}
	if NewStrategy(runtime.NewScheme(), ClusterScoped, validateName, validateNameUpdate).NamespaceScoped() {
		t.Error("ClusterScoped strategy is namespace scoped")
	}

	named := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	if errs := namespaced.Validate(ctx, named); len(errs) != 0 {
		t.Errorf("valid object: %v", errs)
	}
	if errs := namespaced.Validate(ctx, &corev1.ConfigMap{}); len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Errorf("unnamed object: %v, want the error of validate", errs)
	}
	renamed := named.DeepCopy()
	renamed.Name = "b"
	if errs := namespaced.ValidateUpdate(ctx, renamed, named); len(errs) != 1 || errs[0].Type != field.ErrorTypeInvalid {
		t.Errorf("renamed object: %v, want the error of validateUpdate", errs)
	}

	// The shared behaviour: nothing is changed, nothing warned about, PUT
	// does not create and updates need no resourceVersion.
	obj := named.DeepCopy()
	namespaced.PrepareForCreate(ctx, obj)
	namespaced.PrepareForUpdate(ctx, obj, renamed)
	namespaced.Canonicalize(obj)
	if obj.Name != "a" || obj.Data["k"] != "v" {
		t.Errorf("strategy changed the object: %+v", obj)
	}
	if w := namespaced.WarningsOnCreate(ctx, obj); w != nil {
		t.Errorf("warnings on create: %v", w)
	}
	if w := namespaced.WarningsOnUpdate(ctx, obj, renamed); w != nil {
		t.Errorf("warnings on update: %v", w)
	}
	if namespaced.AllowCreateOnUpdate(ctx) {
		t.Error("PUT creates objects")
	}
	if !namespaced.AllowUnconditionalUpdate(ctx) {
		t.Error("updates without resourceVersion are refused")
	}
	if name := namespaced.GenerateName("cm-"); len(name) <= len("cm-") {
		t.Errorf("generated name %q has no suffix", name)
	}
}

func TestResetFields(t *testing.T) {
	tests := []struct {
		name string
		gv   string
		got  map[fieldpath.APIVersion]*fieldpath.Set
		want *fieldpath.Set
	}{
		{
			name: "core group",
			gv:   "v1",
			got:  ResetFields(corev1.SchemeGroupVersion, "status"),
			want: fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
		},
		{
			name: "named group, nested path",
			gv:   "certificates.k8s.io/v1",
			got:  ResetFields(certificatesv1.SchemeGroupVersion, "spec", "status.certificate"),
			want: fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("status", "certificate")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.got) != 1 {
				t.Fatalf("%d versions, want 1: %v", len(tt.got), tt.got)
			}
			set, ok := tt.got[fieldpath.APIVersion(tt.gv)]
			if !ok {
				t.Fatalf("no fields for %s: %v", tt.gv, tt.got)
			}
			if !set.Equals(tt.want) {
				t.Errorf("fields %v, want %v", set, tt.want)
			}
		})
	}
}

func TestStrategyRefusesUnqualifiedFinalizers(t *testing.T) {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(corev1.SchemeGroupVersion, &corev1.ConfigMap{})
	scheme.AddKnownTypes(coordinationv1.SchemeGroupVersion, &coordinationv1.Lease{})
	// Only the core group checks finalizer names, as in Kubernetes.
	leases := NewStrategy(scheme, Namespaced, func(*coordinationv1.Lease) field.ErrorList { return nil }, func(_, _ *coordinationv1.Lease) field.ErrorList { return nil })
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "a", Finalizers: []string{"cleanup"}}}
	if errs := leases.Validate(t.Context(), lease); len(errs) != 0 {
		t.Errorf("an unqualified finalizer on a lease: %v", errs)
	}
	s := NewStrategy(scheme, Namespaced, validateName, validateNameUpdate)
	for _, tt := range []struct {
		finalizers []string
		wantField  string
	}{
		{[]string{"example.com/cleanup", "orphan", "foregroundDeletion", "kubernetes"}, ""},
		{[]string{"example.com/cleanup", "cleanup"}, "metadata.finalizers[1]"},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Finalizers: tt.finalizers}}
		for what, errs := range map[string]field.ErrorList{"create": s.Validate(t.Context(), cm), "update": s.ValidateUpdate(t.Context(), cm, cm)} {
			switch {
			case tt.wantField == "" && len(errs) != 0:
				t.Errorf("%s with %v: %v", what, tt.finalizers, errs)
			case tt.wantField != "" && (len(errs) != 1 || errs[0].Field != tt.wantField):
				t.Errorf("%s with %v: %v, want one error on %s", what, tt.finalizers, errs, tt.wantField)
			}
		}
	}
}
