package replicated

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
)

// strategy completes the generic store, which REST uses for reads only:
// writes go through REST.prepare, which keeps the metadata as written.
type strategy struct {
	typer runtime.ObjectTyper
}

func (s strategy) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return s.typer.ObjectKinds(obj)
}

func (s strategy) Recognizes(gvk schema.GroupVersionKind) bool { return s.typer.Recognizes(gvk) }

func (strategy) GenerateName(base string) string { return names.SimpleNameGenerator.GenerateName(base) }

func (strategy) NamespaceScoped() bool                                            { return false }
func (strategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (strategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (strategy) Validate(context.Context, runtime.Object) field.ErrorList         { return nil }
func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string        { return nil }
func (strategy) Canonicalize(runtime.Object)                                      {}
func (strategy) AllowCreateOnUpdate(context.Context) bool                         { return false }
func (strategy) AllowUnconditionalUpdate(context.Context) bool                    { return true }
func (strategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
