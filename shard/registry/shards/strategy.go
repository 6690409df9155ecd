// Package shards serves core.kcp.io/v1alpha1 Shards: the servers of an
// installation that logical clusters are scheduled onto. Shard objects
// live in the root logical cluster: creating one elsewhere is refused. Their
// URLs are https: shards talk to each other with client certificates, which
// plain http would silently drop.
package shards

import (
	"context"
	"net/url"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// strategy is the create, update and delete strategy of Shards. Writes
// keep the status, which only the status subresource changes, and default
// the external and virtual workspace URLs to the base URL.
type strategy struct {
	store.Strategy[*corev1alpha1.Shard]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate)}
}

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1alpha1.SchemeGroupVersion, "status")
}

// PrepareForCreate drops the status of the request and defaults the URLs.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s := obj.(*corev1alpha1.Shard)
	s.Status = corev1alpha1.ShardStatus{}
	setDefaults(&s.Spec)
}

// PrepareForUpdate keeps the stored status and defaults the URLs.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s := obj.(*corev1alpha1.Shard)
	s.Status = old.(*corev1alpha1.Shard).Status
	setDefaults(&s.Spec)
}

// setDefaults defaults externalURL and virtualWorkspaceURL to baseURL.
func setDefaults(spec *corev1alpha1.ShardSpec) {
	if spec.ExternalURL == "" {
		spec.ExternalURL = spec.BaseURL
	}
	if spec.VirtualWorkspaceURL == "" {
		spec.VirtualWorkspaceURL = spec.BaseURL
	}
}

// Validate validates a new Shard, which can only be created in the root
// logical cluster (of the request context): the shards of an installation
// are read from there.
func (s strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	errs := s.Strategy.Validate(ctx, obj)
	if c, ok := logicalcluster.ClusterFrom(ctx); !ok || c.Wildcard || c.Name != logicalcluster.Root {
		errs = append(errs, field.Forbidden(field.NewPath("metadata"), "Shard objects live in the root logical cluster"))
	}
	return errs
}

// validate validates a new Shard.
func validate(s *corev1alpha1.Shard) field.ErrorList {
	errs := validation.ValidateObjectMeta(&s.ObjectMeta, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateUpdate validates an update; every field of the spec may change.
func validateUpdate(s, old *corev1alpha1.Shard) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateSpec requires baseURL, and every URL set to be an absolute https
// URL.
func validateSpec(spec *corev1alpha1.ShardSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.BaseURL == "" {
		errs = append(errs, field.Required(p.Child("baseURL"), ""))
	} else if msg := invalidURL(spec.BaseURL); msg != "" {
		errs = append(errs, field.Invalid(p.Child("baseURL"), spec.BaseURL, msg))
	}
	if spec.ExternalURL != "" {
		if msg := invalidURL(spec.ExternalURL); msg != "" {
			errs = append(errs, field.Invalid(p.Child("externalURL"), spec.ExternalURL, msg))
		}
	}
	if spec.VirtualWorkspaceURL != "" {
		if msg := invalidURL(spec.VirtualWorkspaceURL); msg != "" {
			errs = append(errs, field.Invalid(p.Child("virtualWorkspaceURL"), spec.VirtualWorkspaceURL, msg))
		}
	}
	return errs
}

// invalidURL says why s is not an absolute https URL, or returns "".
func invalidURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err.Error()
	case u.Scheme == "" || u.Host == "":
		return "must be an absolute URL with scheme and host"
	case u.Scheme != "https":
		return "the scheme must be https: shards authenticate to each other with client certificates, which other schemes do not carry"
	}
	return ""
}

// statusStrategy updates status only.
type statusStrategy struct{ strategy }

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1alpha1.SchemeGroupVersion, "spec", "metadata.labels", "metadata.annotations")
}

// PrepareForUpdate keeps the stored spec, labels and annotations.
func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s, oldS := obj.(*corev1alpha1.Shard), old.(*corev1alpha1.Shard)
	s.Spec = oldS.Spec
	s.Labels, s.Annotations = oldS.Labels, oldS.Annotations
}

// ValidateUpdate validates the metadata; the status is free-form.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*corev1alpha1.Shard), old.(*corev1alpha1.Shard)
	return validation.ValidateObjectMetaUpdate(&s.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
