// Package serviceaccounttokens holds the shard's legacy service account
// token controller, like the tokens controller of kube-controller-manager:
// a Secret of type kubernetes.io/service-account-token that a user creates
// with the annotation kubernetes.io/service-account.name gets data.token (a
// never-expiring token of that service account, naming its logical
// cluster), data["ca.crt"] (the shard's CA) and data.namespace, and the
// annotation kubernetes.io/service-account.uid. A token Secret whose
// service account does not exist, or exists with another UID than the
// Secret names, is deleted, also when the service account is deleted
// later. Secrets are never created for service accounts: modern
// Kubernetes does not either; TokenRequest issues bound tokens.
//
// One controller serves all logical clusters of a shard, through the
// wildcard service account informer and a wildcard informer of token
// Secrets only (authentication.NewTokenSecretInformers); its queue keys are
// Secrets ({Cluster, Namespace, Name}).
//
// # Wiring
//
//	c, err := serviceaccounttokens.New(loopback, factory.ServiceAccounts(), tokenSecrets, issuer, rootCA)
//	// start both informer factories after New
//	go c.Run(ctx)
//
// loopback is the shard's admin loopback config for its base URL; issuer
// and rootCA come from the shard's authentication.Config (Issuer, RootCA).
package serviceaccounttokens
