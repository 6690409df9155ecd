package server

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tessera-dev/tessera/shard/registry/reviews"
)

// reviewStorage serves TokenReview, SelfSubjectReview and the
// SubjectAccessReview family against the shard's own authn and authz.
func (s *Server) reviewStorage() map[schema.GroupVersion]map[string]rest.Storage {
	authz := s.Generic.Authorization.Authorizer
	return map[schema.GroupVersion]map[string]rest.Storage{
		authenticationv1.SchemeGroupVersion: {
			"tokenreviews":       reviews.NewTokenReviews(s.authn.TokenReview),
			"selfsubjectreviews": reviews.NewSelfSubjectReviews(),
		},
		authorizationv1.SchemeGroupVersion: {
			"subjectaccessreviews":      reviews.NewSubjectAccessReviews(authz),
			"selfsubjectaccessreviews":  reviews.NewSelfSubjectAccessReviews(authz),
			"localsubjectaccessreviews": reviews.NewLocalSubjectAccessReviews(authz),
			"selfsubjectrulesreviews":   reviews.NewSelfSubjectRulesReviews(s.rules),
		},
	}
}
