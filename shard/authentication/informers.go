package authentication

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/client/informers"
)

// tokenSecretsSelector selects the Secrets that hold legacy service account
// tokens.
const tokenSecretsSelector = "type=" + string(corev1.SecretTypeServiceAccountToken)

// NewTokenSecretInformers returns an informer factory whose Secrets()
// informer holds only Secrets of type kubernetes.io/service-account-token,
// of all logical clusters of the shard: what the service account token
// authenticator and the legacy token controller read, without keeping
// every Secret of the shard in memory. clients are the shard's wildcard
// clients; opts are applied after the field selector (for example
// informers.WithTransform). Start the factory with the shard's other
// informers.
func NewTokenSecretInformers(clients informers.Clients, opts ...informers.Option) *informers.SharedInformerFactory {
	all := append([]informers.Option{informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = tokenSecretsSelector
	})}, opts...)
	return informers.NewSharedInformerFactory(clients, 0, all...)
}
