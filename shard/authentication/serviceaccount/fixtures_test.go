package serviceaccount

import (
	"context"
	"crypto"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const testIssuer = "https://tessera.test"

var testAudiences = []string{testIssuer}

// store is a fake of an informer cache or of the API server: objects by
// cluster|namespace/name.
type store[T metav1.Object] struct {
	mu      sync.Mutex
	objects map[string]T
	gets    int
}

func newStore[T metav1.Object]() *store[T] { return &store[T]{objects: map[string]T{}} }

func (s *store[T]) put(cluster logicalcluster.Name, obj T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[informers.ToKey(cluster, obj.GetNamespace(), obj.GetName())] = obj
}

func (s *store[T]) remove(cluster logicalcluster.Name, namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, informers.ToKey(cluster, namespace, name))
}

func (s *store[T]) get(_ context.Context, cluster logicalcluster.Name, namespace, name string) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	obj, ok := s.objects[informers.ToKey(cluster, namespace, name)]
	if !ok {
		return obj, apierrors.NewNotFound(corev1.Resource("object"), name)
	}
	return obj, nil
}

func (s *store[T]) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets
}

// env is a shard's worth of service accounts and secrets, cached and live,
// with an issuer, an authenticator and the token subresource over them.
type env struct {
	clock                 *clocktesting.FakePassiveClock
	cachedSAs, liveSAs    *store[*corev1.ServiceAccount]
	cachedSecs, liveSecs  *store[*corev1.Secret]
	issuer                *Issuer
	authn                 *Authenticator
	tokens                *TokenREST
	serviceAccountLookups Lookup[*corev1.ServiceAccount]
	secretLookups         Lookup[*corev1.Secret]
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{
		clock:      clocktesting.NewFakePassiveClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)),
		cachedSAs:  newStore[*corev1.ServiceAccount](),
		liveSAs:    newStore[*corev1.ServiceAccount](),
		cachedSecs: newStore[*corev1.Secret](),
		liveSecs:   newStore[*corev1.Secret](),
	}
	e.serviceAccountLookups = Lookup[*corev1.ServiceAccount]{Cached: e.cachedSAs.get, Live: e.liveSAs.get}
	e.secretLookups = Lookup[*corev1.Secret]{Cached: e.cachedSecs.get, Live: e.liveSecs.get}
	key := testKeys()["rsa"]
	var err error
	if e.issuer, err = NewIssuer(key, testIssuer, e.clock); err != nil {
		t.Fatal(err)
	}
	if e.authn, err = NewAuthenticator(AuthenticatorConfig{
		Keys:            []crypto.PublicKey{key.Public()},
		Issuers:         []string{testIssuer},
		APIAudiences:    testAudiences,
		ServiceAccounts: e.serviceAccountLookups,
		Secrets:         e.secretLookups,
		Clock:           e.clock,
	}); err != nil {
		t.Fatal(err)
	}
	if e.tokens, err = NewTokenREST(TokenRESTConfig{
		Issuer:          e.issuer,
		ServiceAccounts: e.serviceAccountLookups,
		Secrets:         e.secretLookups,
		APIAudiences:    testAudiences,
		MaxExpiration:   48 * time.Hour,
	}); err != nil {
		t.Fatal(err)
	}
	return e
}

// addServiceAccount adds a service account to the cache and the API server.
func (e *env) addServiceAccount(cluster logicalcluster.Name, namespace, name string, uid types.UID) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: namespace, UID: uid,
		Annotations: map[string]string{logicalcluster.AnnotationKey: cluster.String()},
	}}
	e.cachedSAs.put(cluster, sa)
	e.liveSAs.put(cluster, sa)
	return sa
}

// addSecret adds a secret to the cache and the API server.
func (e *env) addSecret(cluster logicalcluster.Name, secret *corev1.Secret) {
	e.cachedSecs.put(cluster, secret)
	e.liveSecs.put(cluster, secret)
}

func (e *env) removeServiceAccount(cluster logicalcluster.Name, namespace, name string) {
	e.cachedSAs.remove(cluster, namespace, name)
	e.liveSAs.remove(cluster, namespace, name)
}

func (e *env) removeSecret(cluster logicalcluster.Name, namespace, name string) {
	e.cachedSecs.remove(cluster, namespace, name)
	e.liveSecs.remove(cluster, namespace, name)
}

// bound issues a bound token for sa in cluster.
func (e *env) bound(t *testing.T, cluster logicalcluster.Name, sa *corev1.ServiceAccount, mutate ...func(*BoundToken)) string {
	t.Helper()
	bt := BoundToken{Cluster: cluster, ServiceAccount: sa, Audiences: testAudiences, Expiration: time.Hour}
	for _, m := range mutate {
		m(&bt)
	}
	issued, err := e.issuer.Bound(bt)
	if err != nil {
		t.Fatal(err)
	}
	return issued.Token
}

// legacy issues a legacy token for sa in cluster and stores it in a new
// token secret.
func (e *env) legacy(t *testing.T, cluster logicalcluster.Name, sa *corev1.ServiceAccount, secretName string) string {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: sa.Namespace, UID: types.UID(secretName + "-uid"),
			Annotations: map[string]string{corev1.ServiceAccountNameKey: sa.Name, corev1.ServiceAccountUIDKey: string(sa.UID)}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	token, err := e.issuer.Legacy(cluster, sa, secret)
	if err != nil {
		t.Fatal(err)
	}
	secret.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte(token)}
	e.addSecret(cluster, secret)
	return token
}

// inCluster returns a context of a request to cluster.
func inCluster(ctx context.Context, cluster logicalcluster.Name) context.Context {
	return logicalcluster.WithName(ctx, cluster)
}
