package publisher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

// The reasons of a PublishedResource's Ready condition when False.
const (
	ReasonInvalidSpec     = "InvalidSpec"
	ReasonCRDNotFound     = "CRDNotFound"
	ReasonNotPublishable  = "NotPublishable"
	ReasonConflict        = "Conflict"
	ReasonPublishFailed   = "PublishFailed"
	ReasonServiceNotFound = "ServiceNotFound"
)

// publishing publishes every PublishedResource in one pass: the export
// lists the schemas of all of them, so they are reconciled together.
type publishing struct {
	// apiGroup returns the Service's API group.
	apiGroup func(ctx context.Context) (string, error)
	// listPublished returns the PublishedResources (from a cache).
	listPublished func() ([]*servicesv1alpha1.PublishedResource, error)
	// listCRDs returns the service cluster's CRDs (from a cache).
	listCRDs func() ([]*apiextensionsv1.CustomResourceDefinition, error)
	// ensureSchema creates the schema in the platform workspace unless a
	// schema of that name is there.
	ensureSchema func(ctx context.Context, s *apisv1alpha1.APIResourceSchema) error
	// ensureExport makes the APIExport named name list exactly schemas
	// and claim exactly claims.
	ensureExport func(ctx context.Context, name string, schemas []string, claims []apisv1alpha1.PermissionClaim) error
	// updateStatus writes a PublishedResource's status.
	updateStatus func(ctx context.Context, pr *servicesv1alpha1.PublishedResource) error
	// onPublished, if set, is told what is published once the export
	// lists it.
	onPublished func(ctx context.Context, apiGroup string, published []Published) error
}

// Published is a PublishedResource in the Service's APIExport, with the
// CRD it publishes.
type Published struct {
	PublishedResource *servicesv1alpha1.PublishedResource
	CRD               *apiextensionsv1.CustomResourceDefinition
}

// reconcile publishes the valid PublishedResources whose CRD is there as
// APIResourceSchemas of the Service's export, and reports each one's
// outcome in its Ready condition.
func (r *publishing) reconcile(ctx context.Context) error {
	prs, err := r.listPublished()
	if err != nil {
		return err
	}
	slices.SortFunc(prs, func(a, b *servicesv1alpha1.PublishedResource) int { return strings.Compare(a.Name, b.Name) })
	apiGroup, err := r.apiGroup(ctx)
	if err != nil {
		for _, pr := range prs {
			r.report(ctx, pr, "", conditionFalse(ReasonServiceNotFound, err.Error()))
		}
		return err
	}
	crds, err := r.listCRDs()
	if err != nil {
		return err
	}

	var (
		schemas  []string
		inExport []Published
		errs     []error
		claimed  = map[string]string{} // projected resource → PublishedResource
	)
	for _, pr := range prs {
		if !pr.DeletionTimestamp.IsZero() {
			continue
		}
		schema, crd, cond := r.publish(ctx, pr, crds, apiGroup, claimed)
		if cond.Reason == ReasonPublishFailed {
			errs = append(errs, errors.New(cond.Message))
		}
		name := ""
		if schema != nil {
			name = schema.Name
			schemas = append(schemas, name)
			inExport = append(inExport, Published{PublishedResource: pr, CRD: crd})
		}
		r.report(ctx, pr, name, cond)
	}
	if err := r.ensureExport(ctx, apiGroup, schemas, relatedClaims(inExport)); err != nil {
		errs = append(errs, fmt.Errorf("updating APIExport %s: %w", apiGroup, err))
	} else if r.onPublished != nil {
		errs = append(errs, r.onPublished(ctx, apiGroup, inExport))
	}
	return utilerrors.NewAggregate(errs)
}

// publish returns the schema of pr once it is in the platform, and pr's
// Ready condition.
func (r *publishing) publish(ctx context.Context, pr *servicesv1alpha1.PublishedResource, crds []*apiextensionsv1.CustomResourceDefinition, apiGroup string, claimed map[string]string) (*apisv1alpha1.APIResourceSchema, *apiextensionsv1.CustomResourceDefinition, conditionsv1alpha1.Condition) {
	if errs := published.Validate(pr); len(errs) > 0 {
		return nil, nil, conditionFalse(ReasonInvalidSpec, errs.ToAggregate().Error())
	}
	src := pr.Spec.Resource
	i := slices.IndexFunc(crds, func(c *apiextensionsv1.CustomResourceDefinition) bool {
		return c.Spec.Group == src.APIGroup && c.Spec.Names.Kind == src.Kind
	})
	if i < 0 {
		return nil, nil, conditionFalse(ReasonCRDNotFound, fmt.Sprintf("the service cluster has no CustomResourceDefinition of kind %s in group %s", src.Kind, src.APIGroup))
	}
	schema, err := SchemaFor(crds[i], pr, apiGroup)
	if err != nil {
		return nil, nil, conditionFalse(ReasonNotPublishable, err.Error())
	}
	resource := schema.Spec.Names.Plural
	if other, ok := claimed[resource]; ok {
		return nil, nil, conditionFalse(ReasonConflict, fmt.Sprintf("PublishedResource %s already publishes %s.%s", other, resource, apiGroup))
	}
	claimed[resource] = pr.Name
	if err := r.ensureSchema(ctx, schema); err != nil {
		return nil, nil, conditionFalse(ReasonPublishFailed, fmt.Sprintf("creating APIResourceSchema %s: %v", schema.Name, err))
	}
	return schema, crds[i], conditionsv1alpha1.Condition{Type: conditionsv1alpha1.ReadyCondition, Status: "True"}
}

// report writes pr's status if it changes; a failure is logged, the next
// event or retry writes it again.
func (r *publishing) report(ctx context.Context, pr *servicesv1alpha1.PublishedResource, schema string, cond conditionsv1alpha1.Condition) {
	updated := pr.DeepCopy()
	updated.Status.ResourceSchemaName = schema
	conditionsv1alpha1.Set(updated, &cond)
	if equality.Semantic.DeepEqual(pr.Status, updated.Status) {
		return
	}
	if err := r.updateStatus(ctx, updated); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot update the status of a PublishedResource", "publishedResource", klog.KObj(pr))
	}
}

func conditionFalse(reason, message string) conditionsv1alpha1.Condition {
	return conditionsv1alpha1.Condition{
		Type:     conditionsv1alpha1.ReadyCondition,
		Status:   "False",
		Severity: conditionsv1alpha1.ConditionSeverityError,
		Reason:   reason,
		Message:  message,
	}
}
