// Package authentication assembles the authentication of a shard, for all
// of its logical clusters at once:
//
//   - request headers (X-Remote-User, X-Remote-Group, X-Remote-Extra-*)
//     from a front-proxy whose client certificate the request-header CA
//     verifies and whose name is allowed (--requestheader-*);
//   - client certificates verified by --client-ca-file (the shard's
//     generated CA by default);
//   - static tokens (--token-auth-file);
//   - service account tokens signed by the shard's key (package
//     serviceaccount): bound tokens from the serviceaccounts/token
//     subresource and legacy tokens from Secrets of type
//     kubernetes.io/service-account-token;
//   - system:anonymous for GET and HEAD of the health paths and /version
//     only; anonymous requests for anything else get 401.
//
// Every authenticated user but anonymous is in system:authenticated.
//
// A service account token authenticates in every logical cluster, with
// its own cluster in the user's extra (serviceaccount.ClusterNameExtraKey);
// the workspace content authorizer refuses service accounts in other
// clusters than their own (403). TokenReview evaluates tokens in the
// logical cluster it is created in: a service account token of another
// cluster is not authenticated there.
//
// # Lifecycle
//
// Options carry the flags. NewConfig reads the files while the server is
// configured (and creates the signing key <root>/certs/sa.key on first
// start); its ClientCA, RequestHeaderConfig and APIAudiences go into the
// generic server's AuthenticationInfo. Config.New assembles the
// authenticators once the shard's wildcard informers exist, before the
// generic server is completed; the informers may sync later (lookups fall
// back to the API server on cache misses). Nothing is created per logical
// cluster.
package authentication
