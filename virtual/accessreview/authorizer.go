// Package accessreview authorizes the requests of a standalone virtual
// workspaces process by asking the shard: a SubjectAccessReview at
// /clusters/<cluster>/apis/authorization.k8s.io/v1/subjectaccessreviews,
// in the logical cluster of the request context, which the shard decides
// with its whole authorizer chain (workspace access, required groups,
// maximal permission policy, RBAC), as it decides its own requests.
//
// Answers are kept for a short while in one bounded cache for all logical
// clusters, keyed by the logical cluster and the whole review (user,
// groups, uid, extra and attributes): k8s.io/apiserver's webhook
// authorizer keys by attributes alone, which would let an answer of one
// logical cluster decide in another. Nothing is started per logical
// cluster.
package accessreview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Config is what the authorizer needs.
type Config struct {
	// Client posts to the shard: the REST client of authorization.k8s.io/v1
	// of a clientset for the shard's base URL, as a shard admin (who may
	// create SubjectAccessReviews in every logical cluster).
	Client rest.Interface
	// AllowTTL and DenyTTL keep allowing and denying answers; zero keeps
	// none. Answers without an opinion and errors are never kept.
	AllowTTL time.Duration
	DenyTTL  time.Duration
	// CacheSize bounds the number of answers kept.
	CacheSize int
}

// Authorizer decides by SubjectAccessReviews against the shard.
type Authorizer struct {
	cfg   Config
	cache *utilcache.LRUExpireCache
	// route, if set, picks the client of the shard that holds a logical
	// cluster not on this one.
	route func(logicalcluster.Name) (rest.Interface, bool)
}

// RouteBy makes the authorizer ask about a logical cluster of another
// shard that shard (route returns its client, or false for this shard's).
// Call it before the authorizer is used.
func (a *Authorizer) RouteBy(route func(logicalcluster.Name) (rest.Interface, bool)) {
	a.route = route
}

// answer is a kept SubjectAccessReview status.
type answer struct {
	decision authorizer.Decision
	reason   string
}

// New returns the authorizer; it starts nothing.
func New(c Config) (*Authorizer, error) {
	if c.Client == nil {
		return nil, errors.New("access review authorizer: a client is required")
	}
	if c.CacheSize < 1 {
		c.CacheSize = 1
	}
	return &Authorizer{cfg: c, cache: utilcache.NewLRUExpireCache(c.CacheSize)}, nil
}

var _ authorizer.Authorizer = &Authorizer{}

// Authorize implements authorizer.Authorizer, in the logical cluster of
// ctx (logicalcluster.WithCluster); without one, or with the wildcard, it
// denies.
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() {
		return authorizer.DecisionDeny, "no logical cluster to authorize in", nil
	}
	spec, err := Spec(attrs)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	key, err := cacheKey(c.Name, spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	if v, ok := a.cache.Get(key); ok {
		ans := v.(answer)
		return ans.decision, ans.reason, nil
	}
	review := &authorizationv1.SubjectAccessReview{Spec: spec}
	result := &authorizationv1.SubjectAccessReview{}
	client := a.cfg.Client
	if a.route != nil {
		if other, ok := a.route(c.Name); ok {
			client = other
		}
	}
	err = client.Post().
		AbsPath("/clusters", string(c.Name), "apis", authorizationv1.SchemeGroupVersion.Group, authorizationv1.SchemeGroupVersion.Version, "subjectaccessreviews").
		Body(review).Do(ctx).Into(result)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", fmt.Errorf("SubjectAccessReview in logical cluster %q: %w", c.Name, err)
	}
	st := result.Status
	ans := answer{decision: authorizer.DecisionNoOpinion, reason: st.Reason}
	switch {
	case st.Allowed:
		ans.decision = authorizer.DecisionAllow
		if a.cfg.AllowTTL > 0 {
			a.cache.Add(key, ans, a.cfg.AllowTTL)
		}
	case st.Denied:
		ans.decision = authorizer.DecisionDeny
		if a.cfg.DenyTTL > 0 {
			a.cache.Add(key, ans, a.cfg.DenyTTL)
		}
	}
	if st.EvaluationError != "" {
		return ans.decision, ans.reason, errors.New(st.EvaluationError)
	}
	return ans.decision, ans.reason, nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer; the
// authorizer makes no conditional decisions.
func (a *Authorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer; it fails closed.
func (a *Authorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// Spec returns the SubjectAccessReview spec that asks for attrs.
func Spec(attrs authorizer.Attributes) (authorizationv1.SubjectAccessReviewSpec, error) {
	u := attrs.GetUser()
	if u == nil {
		return authorizationv1.SubjectAccessReviewSpec{}, errors.New("no user in the attributes")
	}
	spec := authorizationv1.SubjectAccessReviewSpec{User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	for k, v := range u.GetExtra() {
		if spec.Extra == nil {
			spec.Extra = map[string]authorizationv1.ExtraValue{}
		}
		spec.Extra[k] = v
	}
	if attrs.IsResourceRequest() {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace:   attrs.GetNamespace(),
			Verb:        attrs.GetVerb(),
			Group:       attrs.GetAPIGroup(),
			Version:     attrs.GetAPIVersion(),
			Resource:    attrs.GetResource(),
			Subresource: attrs.GetSubresource(),
			Name:        attrs.GetName(),
		}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: attrs.GetPath(), Verb: attrs.GetVerb()}
	}
	return spec, nil
}

// cacheKey is the logical cluster and the review: map keys are sorted
// when marshalled, so equal reviews have equal keys.
func cacheKey(cluster logicalcluster.Name, spec authorizationv1.SubjectAccessReviewSpec) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("access review cache key: %w", err)
	}
	return string(cluster) + "\x00" + string(b), nil
}
