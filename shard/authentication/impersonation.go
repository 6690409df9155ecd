package authentication

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/scopes"
)

// scopeImpersonators limits whoever impersonates someone to the logical
// cluster of the request, with kcp's scope extra. Upstream's impersonation
// filter remembers its decisions for ten seconds under a key made of the
// requestor, the wanted user and the request's attributes, none of which
// names the logical cluster once /clusters/<name> has been stripped from
// the path. The scope puts the cluster into the requestor and so into
// every such key (cluster-keyed), and the authorizer lets a scoped user
// act only in its cluster. Requests across all clusters are left alone:
// only system:masters may impersonate there, and it may everywhere.
func scopeImpersonators(auth authenticator.Request) authenticator.Request {
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		resp, ok, err := auth.AuthenticateRequest(req)
		if !ok || err != nil || resp == nil || resp.User == nil || !impersonates(req) {
			return resp, ok, err
		}
		cluster, hasCluster := logicalcluster.ClusterFrom(req.Context())
		if !hasCluster || cluster.Wildcard || cluster.Name.Empty() {
			return resp, ok, err
		}
		scoped := *resp
		scoped.User = scopes.Limit(resp.User, cluster.Name)
		return &scoped, ok, err
	})
}

// impersonates tells whether a request carries impersonation headers.
func impersonates(req *http.Request) bool {
	for k := range req.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Impersonate-") {
			return true
		}
	}
	return false
}
