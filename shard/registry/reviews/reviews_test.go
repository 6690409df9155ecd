package reviews

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

func alice() *user.DefaultInfo {
	return &user.DefaultInfo{Name: "alice", UID: "alice-uid", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"a"}}}
}

func asAlice(ctx context.Context) context.Context {
	return genericapirequest.WithUser(ctx, alice())
}

func TestStorages(t *testing.T) {
	tests := []struct {
		name       string
		storage    interface{ New() runtime.Object }
		want       runtime.Object
		singular   string
		namespaced bool
	}{
		{"tokenreviews", NewTokenReviews(nil), &authenticationv1.TokenReview{}, "tokenreview", false},
		{"selfsubjectreviews", NewSelfSubjectReviews(), &authenticationv1.SelfSubjectReview{}, "selfsubjectreview", false},
		{"subjectaccessreviews", NewSubjectAccessReviews(nil), &authorizationv1.SubjectAccessReview{}, "subjectaccessreview", false},
		{"selfsubjectaccessreviews", NewSelfSubjectAccessReviews(nil), &authorizationv1.SelfSubjectAccessReview{}, "selfsubjectaccessreview", false},
		{"localsubjectaccessreviews", NewLocalSubjectAccessReviews(nil), &authorizationv1.LocalSubjectAccessReview{}, "localsubjectaccessreview", true},
		{"selfsubjectrulesreviews", NewSelfSubjectRulesReviews(nil), &authorizationv1.SelfSubjectRulesReview{}, "selfsubjectrulesreview", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.storage.New()); diff != "" {
				t.Errorf("new object (-want +got):\n%s", diff)
			}
			s := tt.storage.(interface {
				NamespaceScoped() bool
				GetSingularName() string
			})
			if s.NamespaceScoped() != tt.namespaced || s.GetSingularName() != tt.singular {
				t.Errorf("namespaced %v, singular %q; want %v, %q", s.NamespaceScoped(), s.GetSingularName(), tt.namespaced, tt.singular)
			}
		})
	}
}

func TestTokenReviews(t *testing.T) {
	tokens := authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
		switch token {
		case "alice-token":
			return &authenticator.Response{User: alice(), Audiences: authenticator.Audiences{"shard"}}, true, nil
		case "broken":
			return nil, false, errors.New("token store unavailable")
		default:
			return nil, false, nil
		}
	})
	review := func(token string) *authenticationv1.TokenReview {
		return &authenticationv1.TokenReview{
			Spec:   authenticationv1.TokenReviewSpec{Token: token},
			Status: authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "forged"}},
		}
	}
	tests := []struct {
		name   string
		tokens authenticator.Token
		token  string
		want   authenticationv1.TokenReviewStatus
	}{
		{name: "valid token", tokens: tokens, token: "alice-token", want: authenticationv1.TokenReviewStatus{
			Authenticated: true,
			User: authenticationv1.UserInfo{Username: "alice", UID: "alice-uid", Groups: []string{"devs"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}},
			Audiences: []string{"shard"},
		}},
		{name: "unknown token", tokens: tokens, token: "mallory-token"},
		{name: "authenticator error", tokens: tokens, token: "broken", want: authenticationv1.TokenReviewStatus{Error: "token store unavailable"}},
		{name: "no authenticator", token: "alice-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := review(tt.token)
			out, err := NewTokenReviews(tt.tokens).Create(t.Context(), in, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*authenticationv1.TokenReview)
			if diff := cmp.Diff(tt.want, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if got.Spec.Token != tt.token {
				t.Errorf("spec token %q, want %q", got.Spec.Token, tt.token)
			}
			if diff := cmp.Diff(review(tt.token), in); diff != "" {
				t.Errorf("the request object changed (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		reviews := NewTokenReviews(tokens)
		if _, err := reviews.Create(t.Context(), review(""), nil, nil); !apierrors.IsInvalid(err) {
			t.Errorf("empty token: %v, want Invalid", err)
		}
		if _, err := reviews.Create(t.Context(), &corev1.ConfigMap{}, nil, nil); !apierrors.IsBadRequest(err) {
			t.Errorf("a configmap: %v, want BadRequest", err)
		}
		refuse := func(context.Context, runtime.Object) error {
			return apierrors.NewForbidden(authenticationv1.Resource("tokenreviews"), "", errors.New("no"))
		}
		if _, err := reviews.Create(t.Context(), review("alice-token"), refuse, nil); !apierrors.IsForbidden(err) {
			t.Errorf("refused by admission: %v, want Forbidden", err)
		}
	})
}

func TestSelfSubjectReviews(t *testing.T) {
	out, err := NewSelfSubjectReviews().Create(asAlice(t.Context()), &authenticationv1.SelfSubjectReview{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := authenticationv1.UserInfo{Username: "alice", UID: "alice-uid", Groups: []string{"devs"}, Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}}
	if diff := cmp.Diff(want, out.(*authenticationv1.SelfSubjectReview).Status.UserInfo); diff != "" {
		t.Errorf("user info (-want +got):\n%s", diff)
	}
	if _, err := NewSelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, nil, nil); !apierrors.IsUnauthorized(err) {
		t.Errorf("no user: %v, want Unauthorized", err)
	}
}

// recorder is a stub authorizer: it records the attributes it is asked
// about and answers with decision, reason and err.
type recorder struct {
	attributes authorizer.Attributes
	decision   authorizer.Decision
	reason     string
	err        error
}

func (r *recorder) authorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		r.attributes = a
		return r.decision, r.reason, r.err
	})
}

func readPods() *authorizationv1.ResourceAttributes {
	return &authorizationv1.ResourceAttributes{Namespace: "team", Verb: "get", Group: "", Version: "v1", Resource: "pods", Subresource: "log", Name: "web"}
}

func readHealth() *authorizationv1.NonResourceAttributes {
	return &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}
}

func TestSubjectAccessReviews(t *testing.T) {
	bob := authorizationv1.SubjectAccessReviewSpec{User: "bob", UID: "bob-uid", Groups: []string{"ops"}, Extra: map[string]authorizationv1.ExtraValue{"k": {"v"}}}
	withAttributes := func(spec authorizationv1.SubjectAccessReviewSpec, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewSpec {
		spec.ResourceAttributes, spec.NonResourceAttributes = ra, nra
		return spec
	}
	bobRecord := func(a authorizer.AttributesRecord) authorizer.AttributesRecord {
		a.User = &user.DefaultInfo{Name: "bob", UID: "bob-uid", Groups: []string{"ops"}, Extra: map[string][]string{"k": {"v"}}}
		return a
	}

	tests := []struct {
		name           string
		spec           authorizationv1.SubjectAccessReviewSpec
		answer         recorder
		wantAttributes authorizer.Attributes
		wantStatus     authorizationv1.SubjectAccessReviewStatus
	}{
		{
			name:   "resource request allowed",
			spec:   withAttributes(bob, readPods(), nil),
			answer: recorder{decision: authorizer.DecisionAllow, reason: "RBAC: allowed by RoleBinding"},
			wantAttributes: bobRecord(authorizer.AttributesRecord{Verb: "get", Namespace: "team", APIVersion: "v1",
				Resource: "pods", Subresource: "log", Name: "web", ResourceRequest: true}),
			wantStatus: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "RBAC: allowed by RoleBinding"},
		},
		{
			name: "selectors reach the authorizer",
			spec: withAttributes(bob, &authorizationv1.ResourceAttributes{Verb: "list", Namespace: "team", Resource: "pods",
				FieldSelector: &authorizationv1.FieldSelectorAttributes{Requirements: []metav1.FieldSelectorRequirement{
					{Key: "spec.nodeName", Operator: metav1.FieldSelectorOpIn, Values: []string{"n1"}},
					{Key: "status.phase", Operator: metav1.FieldSelectorOpNotIn, Values: []string{"Failed"}},
				}},
				LabelSelector: &authorizationv1.LabelSelectorAttributes{RawSelector: "app=web,tier!=db"},
			}, nil),
			answer: recorder{decision: authorizer.DecisionAllow},
			wantAttributes: bobRecord(authorizer.AttributesRecord{Verb: "list", Namespace: "team", APIVersion: "*", Resource: "pods", ResourceRequest: true,
				FieldSelectorRequirements: fields.Requirements{
					{Field: "spec.nodeName", Operator: selection.Equals, Value: "n1"},
					{Field: "status.phase", Operator: selection.NotEquals, Value: "Failed"},
				},
				LabelSelectorRequirements: mustLabelRequirements(t, "app=web,tier!=db"),
			}),
			wantStatus: authorizationv1.SubjectAccessReviewStatus{Allowed: true},
		},
		{
			name:           "non-resource request denied",
			spec:           withAttributes(bob, nil, readHealth()),
			answer:         recorder{decision: authorizer.DecisionDeny, reason: "no"},
			wantAttributes: bobRecord(authorizer.AttributesRecord{Verb: "get", Path: "/healthz"}),
			wantStatus:     authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "no"},
		},
		{
			name:           "no opinion with an error",
			spec:           withAttributes(authorizationv1.SubjectAccessReviewSpec{Groups: []string{"ops"}}, readPods(), nil),
			answer:         recorder{decision: authorizer.DecisionNoOpinion, err: errors.New("webhook down")},
			wantAttributes: authorizer.AttributesRecord{User: &user.DefaultInfo{Groups: []string{"ops"}}, Verb: "get", Namespace: "team", APIVersion: "v1", Resource: "pods", Subresource: "log", Name: "web", ResourceRequest: true},
			wantStatus:     authorizationv1.SubjectAccessReviewStatus{EvaluationError: "webhook down"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := tt.answer
			in := &authorizationv1.SubjectAccessReview{Spec: tt.spec}
			out, err := NewSubjectAccessReviews(answer.authorizer()).Create(t.Context(), in, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantAttributes, answer.attributes); diff != "" {
				t.Errorf("attributes asked about (-want +got):\n%s", diff)
			}
			got := out.(*authorizationv1.SubjectAccessReview)
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.spec, got.Spec); diff != "" {
				t.Errorf("spec changed (-want +got):\n%s", diff)
			}
			if in.Status != (authorizationv1.SubjectAccessReviewStatus{}) {
				t.Errorf("the request object changed: %+v", in.Status)
			}
		})
	}

	invalid := []struct {
		name string
		spec authorizationv1.SubjectAccessReviewSpec
	}{
		{"no user or group", withAttributes(authorizationv1.SubjectAccessReviewSpec{}, readPods(), nil)},
		{"no attributes", bob},
		{"both attributes", withAttributes(bob, readPods(), readHealth())},
		{"raw field selector and requirements", withAttributes(bob, &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods",
			FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: "a=b", Requirements: []metav1.FieldSelectorRequirement{{Key: "a", Operator: metav1.FieldSelectorOpIn, Values: []string{"b"}}}},
		}, nil)},
		{"empty label selector", withAttributes(bob, &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods",
			LabelSelector: &authorizationv1.LabelSelectorAttributes{},
		}, nil)},
		{"label requirement without a key", withAttributes(bob, &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods",
			LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{{Operator: metav1.LabelSelectorOpExists}}},
		}, nil)},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			answer := &recorder{decision: authorizer.DecisionAllow}
			_, err := NewSubjectAccessReviews(answer.authorizer()).Create(t.Context(), &authorizationv1.SubjectAccessReview{Spec: tt.spec}, nil, nil)
			if !apierrors.IsInvalid(err) {
				t.Errorf("error %v, want Invalid", err)
			}
			if answer.attributes != nil {
				t.Error("the authorizer was asked")
			}
		})
	}

	t.Run("wrong object", func(t *testing.T) {
		_, err := NewSubjectAccessReviews((&recorder{}).authorizer()).Create(t.Context(), &corev1.ConfigMap{}, nil, nil)
		if !apierrors.IsBadRequest(err) {
			t.Errorf("error %v, want BadRequest", err)
		}
	})
}

func TestLocalSubjectAccessReviews(t *testing.T) {
	review := func(ns string) *authorizationv1.LocalSubjectAccessReview {
		attrs := *readPods()
		attrs.Namespace = ns
		return &authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: &attrs}}
	}
	ctx := genericapirequest.WithNamespace(t.Context(), "team")

	answer := &recorder{decision: authorizer.DecisionAllow}
	out, err := NewLocalSubjectAccessReviews(answer.authorizer()).Create(ctx, review("team"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.(*authorizationv1.LocalSubjectAccessReview).Status.Allowed {
		t.Error("not allowed")
	}
	if answer.attributes == nil || answer.attributes.GetNamespace() != "team" || answer.attributes.GetUser().GetName() != "bob" {
		t.Errorf("attributes asked about: %+v", answer.attributes)
	}

	for name, r := range map[string]*authorizationv1.LocalSubjectAccessReview{
		"other namespace":    review("other"),
		"no resource":        {Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", NonResourceAttributes: readHealth()}},
		"no user or group":   {Spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: review("team").Spec.ResourceAttributes}},
		"non-resource added": {Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: review("team").Spec.ResourceAttributes, NonResourceAttributes: readHealth()}},
	} {
		t.Run(name, func(t *testing.T) {
			answer := &recorder{decision: authorizer.DecisionAllow}
			if _, err := NewLocalSubjectAccessReviews(answer.authorizer()).Create(ctx, r, nil, nil); !apierrors.IsInvalid(err) {
				t.Errorf("error %v, want Invalid", err)
			}
			if answer.attributes != nil {
				t.Error("the authorizer was asked")
			}
		})
	}
}

func TestSelfSubjectAccessReviews(t *testing.T) {
	answer := &recorder{decision: authorizer.DecisionDeny, reason: "not in the group"}
	in := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: readPods()}}
	out, err := NewSelfSubjectAccessReviews(answer.authorizer()).Create(asAlice(t.Context()), in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := authorizer.AttributesRecord{User: alice(),
		Verb: "get", Namespace: "team", APIVersion: "v1", Resource: "pods", Subresource: "log", Name: "web", ResourceRequest: true}
	if diff := cmp.Diff(want, answer.attributes); diff != "" {
		t.Errorf("attributes asked about (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "not in the group"}, out.(*authorizationv1.SelfSubjectAccessReview).Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	if _, err := NewSelfSubjectAccessReviews(answer.authorizer()).Create(t.Context(), in, nil, nil); !apierrors.IsUnauthorized(err) {
		t.Errorf("no user: %v, want Unauthorized", err)
	}
	if _, err := NewSelfSubjectAccessReviews(answer.authorizer()).Create(asAlice(t.Context()), &authorizationv1.SelfSubjectAccessReview{}, nil, nil); !apierrors.IsInvalid(err) {
		t.Errorf("no attributes: %v, want Invalid", err)
	}
}

// rulesFunc is a stub authorizer.RuleResolver.
type rulesFunc func(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error)

func (f rulesFunc) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return f(ctx, u, namespace)
}

func TestSelfSubjectRulesReviews(t *testing.T) {
	var asked struct {
		user      string
		namespace string
	}
	rules := rulesFunc(func(_ context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
		asked.user, asked.namespace = u.GetName(), namespace
		return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"web"}}},
			[]authorizer.NonResourceRuleInfo{&authorizer.DefaultNonResourceRuleInfo{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
			true, errors.New("one binding could not be read")
	})
	in := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team"}}
	out, err := NewSelfSubjectRulesReviews(rules).Create(asAlice(t.Context()), in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if asked.user != "alice" || asked.namespace != "team" {
		t.Errorf("rules asked for %q in %q, want alice in team", asked.user, asked.namespace)
	}
	want := authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"web"}}},
		NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}},
		Incomplete:       true,
		EvaluationError:  "one binding could not be read",
	}
	got := out.(*authorizationv1.SelfSubjectRulesReview)
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if got.Spec.Namespace != "team" || len(in.Status.ResourceRules) != 0 {
		t.Errorf("spec %+v, request status %+v", got.Spec, in.Status)
	}

	if _, err := NewSelfSubjectRulesReviews(rules).Create(t.Context(), in, nil, nil); !apierrors.IsUnauthorized(err) {
		t.Errorf("no user: %v, want Unauthorized", err)
	}
	if _, err := NewSelfSubjectRulesReviews(rules).Create(asAlice(t.Context()), &corev1.ConfigMap{}, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("a configmap: %v, want BadRequest", err)
	}
}

func mustLabelRequirements(t *testing.T, raw string) labels.Requirements {
	t.Helper()
	sel, err := labels.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := sel.Requirements()
	return reqs
}
