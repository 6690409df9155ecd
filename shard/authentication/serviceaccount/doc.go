// Package serviceaccount issues and validates the service account tokens of
// a shard, for all of its logical clusters.
//
// Tokens are JWTs signed with the shard's key (EnsureSigningKey keeps it in
// the root directory, so tokens survive restarts) and carry kcp's claims:
// upstream Kubernetes' claims plus the logical cluster of the service
// account (see claims.go for both shapes). The pieces:
//
//   - Issuer mints bound tokens (TokenRequest) and legacy tokens (for
//     Secrets of type kubernetes.io/service-account-token, filled by the
//     controller in shard/controllers/serviceaccounttokens).
//   - TokenREST is the storage of the serviceaccounts/token subresource
//     (`kubectl create token`); it issues tokens for service accounts of
//     the request's logical cluster.
//   - Authenticator validates tokens: signature, expiry, audience, and that
//     the service account (and the Secret of legacy or Secret-bound tokens)
//     still exists in the token's logical cluster with the token's UID. The
//     user is system:serviceaccount:<ns>:<name> with the groups
//     system:serviceaccounts and system:serviceaccounts:<ns>, and the
//     token's logical cluster in its extra under ClusterNameExtraKey. The
//     Authenticator accepts a token in any logical cluster; the workspace
//     content authorizer refuses service accounts outside their own.
//   - InRequestCluster wraps an authenticator for TokenReview, which only
//     accepts service account tokens of the cluster it is created in.
//   - Lookup reads service accounts and Secrets from the shard's wildcard
//     informers and falls back to the API server on a miss: one instance
//     per shard, nothing per logical cluster.
package serviceaccount
