// Package workspaces serves tenancy.kcp.io/v1alpha1 Workspaces: the child
// workspaces of a logical cluster, each backed by a logical cluster of its
// own. The storage keeps the phase label equal to status.phase and guards
// what may change once set (spec.type, spec.cluster, spec.URL); who may set
// what, and the workspace type rules, are the job of the workspace
// admission plugin.
package workspaces

import (
	"context"
	"fmt"
	"maps"
	"net/url"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/tenancy/workspacetypes"
)

// PhaseDeleting is the phase of a workspace whose logical cluster is being
// deleted. The LogicalCluster API has no such phase; only workspaces show it.
const PhaseDeleting corev1alpha1.LogicalClusterPhaseType = "Deleting"

// phases are the phases a workspace status may show.
var phases = []corev1alpha1.LogicalClusterPhaseType{
	corev1alpha1.LogicalClusterPhaseScheduling,
	corev1alpha1.LogicalClusterPhaseInitializing,
	corev1alpha1.LogicalClusterPhaseReady,
	corev1alpha1.LogicalClusterPhaseUnavailable,
	PhaseDeleting,
}

// strategy is the create, update and delete strategy of Workspaces. Writes
// keep the status, which only the status subresource changes.
type strategy struct {
	store.Strategy[*tenancyv1alpha1.Workspace]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate)}
}

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(tenancyv1alpha1.SchemeGroupVersion, "status")
}

// PrepareForCreate starts the workspace in phase Scheduling.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	ws := obj.(*tenancyv1alpha1.Workspace)
	ws.Status = tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseScheduling}
	syncPhaseLabel(ws)
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	ws := obj.(*tenancyv1alpha1.Workspace)
	ws.Status = old.(*tenancyv1alpha1.Workspace).Status
	syncPhaseLabel(ws)
}

// syncPhaseLabel makes the phase label of ws show its status.phase; users
// cannot set or remove it.
func syncPhaseLabel(ws *tenancyv1alpha1.Workspace) {
	if ws.Status.Phase == "" {
		delete(ws.Labels, tenancyv1alpha1.WorkspacePhaseLabel)
		if len(ws.Labels) == 0 {
			ws.Labels = nil
		}
		return
	}
	if ws.Labels == nil {
		ws.Labels = map[string]string{}
	}
	ws.Labels[tenancyv1alpha1.WorkspacePhaseLabel] = string(ws.Status.Phase)
}

// validate validates a new Workspace.
func validate(ws *tenancyv1alpha1.Workspace) field.ErrorList {
	errs := validation.ValidateObjectMeta(&ws.ObjectMeta, false, validation.NameIsDNSLabel, field.NewPath("metadata"))
	return append(errs, validateSpec(&ws.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *tenancyv1alpha1.WorkspaceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Type != nil {
		errs = append(errs, workspacetypes.ValidateReference(*spec.Type, p.Child("type"))...)
	}
	if spec.Location != nil && spec.Location.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Location.Selector, metav1validation.LabelSelectorValidationOptions{},
			p.Child("location", "selector"))...)
	}
	if spec.Cluster != "" && !logicalcluster.Name(spec.Cluster).IsValid() {
		errs = append(errs, field.Invalid(p.Child("cluster"), spec.Cluster, logicalcluster.ValidationMessage))
	}
	if spec.URL != "" {
		if msg := invalidURL(spec.URL); msg != "" {
			errs = append(errs, field.Invalid(p.Child("URL"), spec.URL, msg))
		}
	}
	return errs
}

// invalidURL says why s is not an absolute URL, or returns "".
func invalidURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err.Error()
	case u.Scheme == "" || u.Host == "":
		return "must be an absolute URL with scheme and host"
	}
	return ""
}

// validateUpdate validates an update: spec.type cannot change once set, and
// spec.cluster and spec.URL can be set once but not changed or removed.
func validateUpdate(ws, old *tenancyv1alpha1.Workspace) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&ws.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&ws.Spec, field.NewPath("spec"))...)
	if old.Spec.Type != nil && !apiequality.Semantic.DeepEqual(ws.Spec.Type, old.Spec.Type) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "type"), ws.Spec.Type, "field is immutable"))
	}
	if old.Spec.Cluster != "" && ws.Spec.Cluster != old.Spec.Cluster {
		errs = append(errs, field.Invalid(field.NewPath("spec", "cluster"), ws.Spec.Cluster, "field is immutable once set"))
	}
	if old.Spec.URL != "" && ws.Spec.URL != old.Spec.URL {
		errs = append(errs, field.Invalid(field.NewPath("spec", "URL"), ws.Spec.URL, "field is immutable once set"))
	}
	return errs
}

// statusStrategy updates status only, and the phase label with it.
type statusStrategy struct{ strategy }

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(tenancyv1alpha1.SchemeGroupVersion, "spec", "metadata.labels", "metadata.annotations")
}

// PrepareForUpdate keeps the stored spec, labels and annotations, and sets
// the phase label to the new phase.
func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	ws, oldWS := obj.(*tenancyv1alpha1.Workspace), old.(*tenancyv1alpha1.Workspace)
	ws.Spec = oldWS.Spec
	ws.Labels, ws.Annotations = maps.Clone(oldWS.Labels), oldWS.Annotations
	syncPhaseLabel(ws)
}

// ValidateUpdate validates the status: a known phase.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	ws, oldWS := obj.(*tenancyv1alpha1.Workspace), old.(*tenancyv1alpha1.Workspace)
	errs := validation.ValidateObjectMetaUpdate(&ws.ObjectMeta, &oldWS.ObjectMeta, field.NewPath("metadata"))
	if ws.Status.Phase != "" && !knownPhase(ws.Status.Phase) {
		errs = append(errs, field.NotSupported(field.NewPath("status", "phase"), ws.Status.Phase, phases))
	}
	return errs
}

func knownPhase(phase corev1alpha1.LogicalClusterPhaseType) bool {
	for _, p := range phases {
		if p == phase {
			return true
		}
	}
	return false
}

// GetAttrs returns labels and fields for selectors: metadata.name and
// status.phase.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	return store.Attrs(obj, func(ws *tenancyv1alpha1.Workspace) fields.Set {
		return fields.Set{"metadata.name": ws.Name, "status.phase": string(ws.Status.Phase)}
	})
}

// AddFieldLabelConversions registers the field selector labels of
// Workspaces (metadata.name, status.phase) in s; without it the API server
// refuses a status.phase field selector.
func AddFieldLabelConversions(s *runtime.Scheme) error {
	return store.AddFieldLabels(s, tenancyv1alpha1.SchemeGroupVersion, ConvertFieldLabel, "Workspace")
}

// ConvertFieldLabel accepts the field selector labels of workspaces.
func ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "status.phase":
		return label, value, nil
	default:
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
