package server

import (
	"context"
	"os"
	"slices"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// mastersGroup is the only group allowed in.
const mastersGroup = user.SystemPrivilegedGroup

// mastersOnly allows everything to members of system:masters and nothing
// to anyone else: the cache server holds replicas for shards, not for
// users.
func mastersOnly() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(authorizeMasters)
}

func authorizeMasters(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if u := a.GetUser(); u != nil && slices.Contains(u.GetGroups(), mastersGroup) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionDeny, "only members of " + mastersGroup + " may use the cache server", nil
}

// withAuthenticatedGroup adds system:authenticated to every authenticated
// user, as Kubernetes does.
func withAuthenticatedGroup(a authenticator.Request) authenticator.Request {
	return group.NewAuthenticatedGroupAdder(a)
}

func mkdir(dir string) error {
	return os.MkdirAll(dir, 0o700)
}
