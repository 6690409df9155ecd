// Package reviews serves the create-only review APIs: TokenReview,
// SelfSubjectReview and the SubjectAccessReview family. They evaluate the
// request against the shard's authenticator and authorizer, in the logical
// cluster of the request.
package reviews

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// base implements what every review storage shares.
type base struct {
	newFunc  func() runtime.Object
	singular string
}

func (b base) New() runtime.Object     { return b.newFunc() }
func (b base) Destroy()                {}
func (b base) NamespaceScoped() bool   { return false }
func (b base) GetSingularName() string { return b.singular }

// TokenReviews authenticates tokens.
type TokenReviews struct {
	base
	Tokens authenticator.Token
}

// NewTokenReviews returns the tokenreviews storage.
func NewTokenReviews(tokens authenticator.Token) *TokenReviews {
	return &TokenReviews{base: base{func() runtime.Object { return &authenticationv1.TokenReview{} }, "tokenreview"}, Tokens: tokens}
}

var _ rest.Creater = &TokenReviews{}

// Create implements rest.Creater.
func (t *TokenReviews) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	review, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenReview: %T", obj))
	}
	if review.Spec.Token == "" {
		return nil, apierrors.NewInvalid(authenticationv1.SchemeGroupVersion.WithKind("TokenReview").GroupKind(), "",
			field.ErrorList{field.Required(field.NewPath("spec", "token"), "")})
	}
	if validate != nil {
		if err := validate(ctx, obj); err != nil {
			return nil, err
		}
	}
	out := review.DeepCopy()
	out.Status = authenticationv1.TokenReviewStatus{}
	if t.Tokens == nil {
		return out, nil
	}
	resp, ok, err := t.Tokens.AuthenticateToken(ctx, review.Spec.Token)
	if err != nil {
		out.Status.Error = err.Error()
	}
	if ok && resp != nil {
		out.Status.Authenticated = true
		out.Status.User = userInfo(resp.User)
		out.Status.Audiences = resp.Audiences
	}
	return out, nil
}

func userInfo(u user.Info) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	if extra := u.GetExtra(); len(extra) > 0 {
		info.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range extra {
			info.Extra[k] = v
		}
	}
	return info
}

// SelfSubjectReviews tells users who they are (kubectl auth whoami).
type SelfSubjectReviews struct{ base }

// NewSelfSubjectReviews returns the selfsubjectreviews storage.
func NewSelfSubjectReviews() *SelfSubjectReviews {
	return &SelfSubjectReviews{base{func() runtime.Object { return &authenticationv1.SelfSubjectReview{} }, "selfsubjectreview"}}
}

// Create implements rest.Creater.
func (s *SelfSubjectReviews) Create(ctx context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewUnauthorized("no user in the request")
	}
	return &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(u)}}, nil
}

// AccessReviews evaluates SubjectAccessReviews, LocalSubjectAccessReviews and
// SelfSubjectAccessReviews.
type AccessReviews struct {
	base
	kind       string
	Authorizer authorizer.Authorizer
}

// NewSubjectAccessReviews returns the subjectaccessreviews storage.
func NewSubjectAccessReviews(a authorizer.Authorizer) *AccessReviews {
	return &AccessReviews{base{func() runtime.Object { return &authorizationv1.SubjectAccessReview{} }, "subjectaccessreview"}, "SubjectAccessReview", a}
}

// NewSelfSubjectAccessReviews returns the selfsubjectaccessreviews storage.
func NewSelfSubjectAccessReviews(a authorizer.Authorizer) *AccessReviews {
	return &AccessReviews{base{func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} }, "selfsubjectaccessreview"}, "SelfSubjectAccessReview", a}
}

// NewLocalSubjectAccessReviews returns the localsubjectaccessreviews storage.
func NewLocalSubjectAccessReviews(a authorizer.Authorizer) *LocalAccessReviews {
	return &LocalAccessReviews{AccessReviews{base{func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} }, "localsubjectaccessreview"}, "LocalSubjectAccessReview", a}}
}

// LocalAccessReviews is namespaced.
type LocalAccessReviews struct{ AccessReviews }

// NamespaceScoped implements rest.Scoper.
func (LocalAccessReviews) NamespaceScoped() bool { return true }

// Create implements rest.Creater.
func (a *AccessReviews) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	gk := authorizationv1.SchemeGroupVersion.WithKind(a.kind).GroupKind()
	var (
		spec   authorizationv1.SubjectAccessReviewSpec
		status *authorizationv1.SubjectAccessReviewStatus
	)
	switch r := obj.(type) {
	case *authorizationv1.SubjectAccessReview:
		r = r.DeepCopy()
		obj, spec, status = r, r.Spec, &r.Status
		if spec.User == "" && len(spec.Groups) == 0 {
			return nil, apierrors.NewInvalid(gk, "", field.ErrorList{field.Required(field.NewPath("spec", "user"), "at least one of user or group must be specified")})
		}
	case *authorizationv1.LocalSubjectAccessReview:
		r = r.DeepCopy()
		obj, spec, status = r, r.Spec, &r.Status
		ns := genericapirequest.NamespaceValue(ctx)
		if spec.ResourceAttributes == nil || spec.ResourceAttributes.Namespace != ns {
			return nil, apierrors.NewInvalid(gk, "", field.ErrorList{field.Invalid(field.NewPath("spec", "resourceAttributes", "namespace"), "", "must match the namespace of the request: "+ns)})
		}
		if spec.User == "" && len(spec.Groups) == 0 {
			return nil, apierrors.NewInvalid(gk, "", field.ErrorList{field.Required(field.NewPath("spec", "user"), "at least one of user or group must be specified")})
		}
	case *authorizationv1.SelfSubjectAccessReview:
		r = r.DeepCopy()
		u, ok := genericapirequest.UserFrom(ctx)
		if !ok {
			return nil, apierrors.NewUnauthorized("no user in the request")
		}
		obj, status = r, &r.Status
		spec = authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: r.Spec.ResourceAttributes, NonResourceAttributes: r.Spec.NonResourceAttributes,
			User: u.GetName(), Groups: u.GetGroups(), UID: u.GetUID(),
		}
		for k, v := range u.GetExtra() {
			if spec.Extra == nil {
				spec.Extra = map[string]authorizationv1.ExtraValue{}
			}
			spec.Extra[k] = v
		}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unexpected object %T", obj))
	}
	if (spec.ResourceAttributes == nil) == (spec.NonResourceAttributes == nil) {
		return nil, apierrors.NewInvalid(gk, "", field.ErrorList{field.Invalid(field.NewPath("spec"), "", "exactly one of resourceAttributes or nonResourceAttributes must be set")})
	}
	if ra := spec.ResourceAttributes; ra != nil {
		p := field.NewPath("spec", "resourceAttributes")
		errs := validateSelector(ra.FieldSelector != nil, fieldSelectorRaw(ra), fieldSelectorRequirements(ra), p.Child("fieldSelector"), func(i int) field.ErrorList {
			return metav1validation.ValidateFieldSelectorRequirement(ra.FieldSelector.Requirements[i], metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}, p.Child("fieldSelector", "requirements").Index(i))
		})
		errs = append(errs, validateSelector(ra.LabelSelector != nil, labelSelectorRaw(ra), labelSelectorRequirements(ra), p.Child("labelSelector"), func(i int) field.ErrorList {
			return metav1validation.ValidateLabelSelectorRequirement(ra.LabelSelector.Requirements[i], metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}, p.Child("labelSelector", "requirements").Index(i))
		})...)
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(gk, "", errs)
		}
	}
	if validate != nil {
		if err := validate(ctx, obj); err != nil {
			return nil, err
		}
	}
	decision, reason, err := a.Authorizer.Authorize(ctx, attributes(spec))
	*status = authorizationv1.SubjectAccessReviewStatus{
		Allowed: decision == authorizer.DecisionAllow,
		Denied:  decision == authorizer.DecisionDeny,
		Reason:  reason,
	}
	if err != nil {
		status.EvaluationError = err.Error()
	}
	return obj, nil
}

func attributes(spec authorizationv1.SubjectAccessReviewSpec) authorizer.Attributes {
	u := &user.DefaultInfo{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	if ra := spec.ResourceAttributes; ra != nil {
		version := ra.Version
		if version == "" {
			version = "*"
		}
		attrs := authorizer.AttributesRecord{
			User: u, Verb: ra.Verb, Namespace: ra.Namespace, APIGroup: ra.Group, APIVersion: version,
			Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name, ResourceRequest: true,
		}
		attrs.FieldSelectorRequirements, attrs.FieldSelectorParsingErr = fieldRequirements(ra.FieldSelector)
		attrs.LabelSelectorRequirements, attrs.LabelSelectorParsingErr = labelRequirements(ra.LabelSelector)
		return attrs
	}
	return authorizer.AttributesRecord{User: u, Verb: spec.NonResourceAttributes.Verb, Path: spec.NonResourceAttributes.Path}
}

// SelfSubjectRulesReviews lists what the requesting user may do in a
// namespace (kubectl auth can-i --list).
type SelfSubjectRulesReviews struct {
	base
	Rules authorizer.RuleResolver
}

// NewSelfSubjectRulesReviews returns the selfsubjectrulesreviews storage.
func NewSelfSubjectRulesReviews(r authorizer.RuleResolver) *SelfSubjectRulesReviews {
	return &SelfSubjectRulesReviews{base{func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} }, "selfsubjectrulesreview"}, r}
}

// Create implements rest.Creater.
func (s *SelfSubjectRulesReviews) Create(ctx context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	r, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unexpected object %T", obj))
	}
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewUnauthorized("no user in the request")
	}
	out := r.DeepCopy()
	res, nonRes, incomplete, err := s.Rules.RulesFor(ctx, u, r.Spec.Namespace)
	out.Status = authorizationv1.SubjectRulesReviewStatus{Incomplete: incomplete}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	for _, rr := range res {
		out.Status.ResourceRules = append(out.Status.ResourceRules, authorizationv1.ResourceRule{
			Verbs: rr.GetVerbs(), APIGroups: rr.GetAPIGroups(), Resources: rr.GetResources(), ResourceNames: rr.GetResourceNames()})
	}
	for _, nr := range nonRes {
		out.Status.NonResourceRules = append(out.Status.NonResourceRules, authorizationv1.NonResourceRule{Verbs: nr.GetVerbs(), NonResourceURLs: nr.GetNonResourceURLs()})
	}
	return out, nil
}

// The selectors of an access review, as kube-apiserver reads them: a raw
// selector or requirements (not both), parsed into the requirements the
// authorizers see. Requirements that cannot be used are dropped with a
// parsing error: requirements are ANDed, so the check only gets broader.

func fieldSelectorRaw(ra *authorizationv1.ResourceAttributes) string {
	if ra.FieldSelector == nil {
		return ""
	}
	return ra.FieldSelector.RawSelector
}

func fieldSelectorRequirements(ra *authorizationv1.ResourceAttributes) int {
	if ra.FieldSelector == nil {
		return 0
	}
	return len(ra.FieldSelector.Requirements)
}

func labelSelectorRaw(ra *authorizationv1.ResourceAttributes) string {
	if ra.LabelSelector == nil {
		return ""
	}
	return ra.LabelSelector.RawSelector
}

func labelSelectorRequirements(ra *authorizationv1.ResourceAttributes) int {
	if ra.LabelSelector == nil {
		return 0
	}
	return len(ra.LabelSelector.Requirements)
}

// validateSelector checks a selector of an access review: a raw selector or
// requirements, each requirement valid.
func validateSelector(set bool, raw string, requirements int, fldPath *field.Path, requirement func(i int) field.ErrorList) field.ErrorList {
	if !set {
		return nil
	}
	var errs field.ErrorList
	if raw != "" && requirements > 0 {
		errs = append(errs, field.Invalid(fldPath.Child("rawSelector"), raw, "may not specified at the same time as requirements"))
	}
	if raw == "" && requirements == 0 {
		errs = append(errs, field.Required(fldPath.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", fldPath)))
	}
	for i := range requirements {
		errs = append(errs, requirement(i)...)
	}
	return errs
}

func fieldRequirements(s *authorizationv1.FieldSelectorAttributes) (fields.Requirements, error) {
	if s == nil {
		return nil, nil
	}
	if s.RawSelector != "" {
		sel, err := fields.ParseSelector(s.RawSelector)
		if err != nil {
			return nil, err
		}
		return sel.Requirements(), nil
	}
	var reqs fields.Requirements
	var errs []error
	for _, r := range s.Requirements {
		if len(r.Values) != 1 {
			errs = append(errs, fmt.Errorf("fieldSelectors %s must have exactly one value", r.Operator))
			continue
		}
		switch r.Operator {
		case metav1.FieldSelectorOpIn:
			reqs = append(reqs, fields.Requirement{Field: r.Key, Operator: selection.Equals, Value: r.Values[0]})
		case metav1.FieldSelectorOpNotIn:
			reqs = append(reqs, fields.Requirement{Field: r.Key, Operator: selection.NotEquals, Value: r.Values[0]})
		default:
			errs = append(errs, fmt.Errorf("fieldSelectors do not support the operator %q", r.Operator))
		}
	}
	return reqs, utilerrors.NewAggregate(errs)
}

var labelOperators = map[metav1.LabelSelectorOperator]selection.Operator{
	metav1.LabelSelectorOpIn:           selection.In,
	metav1.LabelSelectorOpNotIn:        selection.NotIn,
	metav1.LabelSelectorOpExists:       selection.Exists,
	metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
}

func labelRequirements(s *authorizationv1.LabelSelectorAttributes) (labels.Requirements, error) {
	if s == nil {
		return nil, nil
	}
	if s.RawSelector != "" {
		sel, err := labels.Parse(s.RawSelector)
		if err != nil {
			return nil, err
		}
		reqs, _ := sel.Requirements()
		return reqs, nil
	}
	var reqs labels.Requirements
	var errs []error
	for _, r := range s.Requirements {
		op, ok := labelOperators[r.Operator]
		if !ok {
			errs = append(errs, fmt.Errorf("%q is not a valid label selector operator", r.Operator))
			continue
		}
		values := r.Values
		if len(values) == 0 {
			values = nil
		}
		req, err := labels.NewRequirement(r.Key, op, values)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, *req)
	}
	return reqs, utilerrors.NewAggregate(errs)
}
