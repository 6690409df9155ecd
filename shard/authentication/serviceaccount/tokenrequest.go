package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/audit"
	apiserverserviceaccount "k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/token/jwt"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const (
	// DefaultExpiration is the lifetime of a token whose TokenRequest
	// names none, as in Kubernetes.
	DefaultExpiration = time.Hour
	// MinExpiration is the shortest lifetime a TokenRequest may ask for, as
	// in Kubernetes.
	MinExpiration = 10 * time.Minute
	// maxExpirationSeconds is the longest lifetime the API accepts, as in
	// Kubernetes.
	maxExpirationSeconds = math.MaxUint32
)

// tokenRequestKind is the kind the subresource serves.
var tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// TokenRESTConfig configures a TokenREST.
type TokenRESTConfig struct {
	// Issuer signs the tokens.
	Issuer *Issuer
	// ServiceAccounts looks up the service account a token is for.
	ServiceAccounts Lookup[*corev1.ServiceAccount]
	// Secrets looks up the Secret a token is bound to.
	Secrets Lookup[*corev1.Secret]
	// APIAudiences are the audiences of tokens whose TokenRequest names
	// none.
	APIAudiences []string
	// MaxExpiration shortens longer requested lifetimes, with a warning;
	// zero means no maximum.
	MaxExpiration time.Duration
}

// TokenREST serves the token subresource of service accounts
// (POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token), which
// issues bound tokens for service accounts of the request's logical
// cluster, as `kubectl create token` asks for them.
type TokenREST struct {
	cfg TokenRESTConfig
}

var (
	_ rest.NamedCreater             = &TokenREST{}
	_ rest.GroupVersionKindProvider = &TokenREST{}
)

// NewTokenREST returns the storage of serviceaccounts/token.
func NewTokenREST(cfg TokenRESTConfig) (*TokenREST, error) {
	switch {
	case cfg.Issuer == nil:
		return nil, errors.New("serviceaccounts/token needs an issuer")
	case cfg.ServiceAccounts.Cached == nil || cfg.Secrets.Cached == nil:
		return nil, errors.New("serviceaccounts/token needs service account and secret lookups")
	case len(cfg.APIAudiences) == 0:
		return nil, errors.New("serviceaccounts/token needs at least one API audience")
	case cfg.MaxExpiration < 0 || (cfg.MaxExpiration > 0 && cfg.MaxExpiration < MinExpiration):
		return nil, fmt.Errorf("the maximum token expiration must be zero or at least %s, not %s", MinExpiration, cfg.MaxExpiration)
	}
	return &TokenREST{cfg: cfg}, nil
}

// New implements rest.Storage.
func (r *TokenREST) New() runtime.Object { return &authenticationv1.TokenRequest{} }

// Destroy implements rest.Storage.
func (r *TokenREST) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider: the
// subresource of a core resource serves authentication.k8s.io/v1
// TokenRequests.
func (r *TokenREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return tokenRequestKind
}

// Create implements rest.NamedCreater: it issues a token for the service
// account name of the request's namespace and logical cluster.
func (r *TokenREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	in, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest: %T", obj))
	}
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() {
		return nil, apierrors.NewBadRequest("tokens are issued in one logical cluster, not across clusters")
	}
	namespace, ok := genericapirequest.NamespaceFrom(ctx)
	if !ok || namespace == "" {
		return nil, apierrors.NewBadRequest("a namespace is required")
	}
	req := in.DeepCopy()
	if errs := validateRequest(req, namespace, name); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, errs)
	}
	logger := klog.FromContext(ctx).WithValues("cluster", c.Name, "serviceAccount", klog.KRef(namespace, name))

	sa, err := r.cfg.ServiceAccounts.Get(ctx, c.Name, namespace, name, nil)
	if err != nil {
		return nil, apiError(corev1.Resource("serviceaccounts"), name, err)
	}
	if sa.DeletionTimestamp != nil {
		return nil, apierrors.NewConflict(corev1.Resource("serviceaccounts"), name, errors.New("the service account is being deleted"))
	}

	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = append([]string(nil), r.cfg.APIAudiences...)
	}
	req.Name, req.Namespace = sa.Name, sa.Namespace
	req.CreationTimestamp = metav1.Now()
	req.Status = authenticationv1.TokenRequestStatus{}
	if createValidation != nil {
		if err := createValidation(ctx, req.DeepCopy()); err != nil {
			return nil, err
		}
	}

	secret, err := r.boundSecret(ctx, c.Name, namespace, req.Spec.BoundObjectRef)
	if err != nil {
		return nil, err
	}
	expiration := time.Duration(*req.Spec.ExpirationSeconds) * time.Second
	if limit := r.cfg.MaxExpiration; limit > 0 && expiration > limit {
		warning.AddWarning(ctx, "", fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", *req.Spec.ExpirationSeconds, int64(limit/time.Second)))
		expiration = limit
		req.Spec.ExpirationSeconds = ptr.To(int64(limit / time.Second))
	}

	issued, err := r.cfg.Issuer.Bound(BoundToken{
		Cluster:        c.Name,
		ServiceAccount: sa,
		Secret:         secret,
		Audiences:      req.Spec.Audiences,
		Expiration:     expiration,
	})
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("issuing a token for service account %s/%s: %w", namespace, name, err))
	}
	audit.AddAuditAnnotation(ctx, apiserverserviceaccount.IssuedCredentialIDAuditAnnotationKey, jwt.CredentialIDForJTI(issued.ID))
	logger.V(4).Info("Issued service account token", "expires", issued.Expires, "audiences", req.Spec.Audiences)

	req.Status = authenticationv1.TokenRequestStatus{Token: issued.Token, ExpirationTimestamp: metav1.NewTime(issued.Expires)}
	return req, nil
}

// validateRequest defaults the expiration of req and checks it, as
// Kubernetes' TokenRequest validation does.
func validateRequest(req *authenticationv1.TokenRequest, namespace, name string) field.ErrorList {
	var errs field.ErrorList
	if req.Name != "" && req.Name != name {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified"))
	}
	if req.Namespace != "" && req.Namespace != namespace {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified"))
	}
	if req.Spec.ExpirationSeconds == nil {
		req.Spec.ExpirationSeconds = ptr.To(int64(DefaultExpiration / time.Second))
	}
	exp := field.NewPath("spec", "expirationSeconds")
	switch s := *req.Spec.ExpirationSeconds; {
	case s < int64(MinExpiration/time.Second):
		errs = append(errs, field.Invalid(exp, s, "may not specify a duration less than 10 minutes"))
	case s > maxExpirationSeconds:
		errs = append(errs, field.TooLong(exp, s, maxExpirationSeconds))
	}
	for i, a := range req.Spec.Audiences {
		if a == "" {
			errs = append(errs, field.Invalid(field.NewPath("spec", "audiences").Index(i), a, "must not be empty"))
		}
	}
	if ref := req.Spec.BoundObjectRef; ref != nil {
		p := field.NewPath("spec", "boundObjectRef")
		if ref.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		if ref.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), ""))
		}
	}
	return errs
}

// boundSecret returns the Secret a token is to be bound to, nil for
// unbound tokens. Only Secrets can be bound objects here: the shard serves
// no pods and nodes.
func (r *TokenREST) boundSecret(ctx context.Context, cluster logicalcluster.Name, namespace string, ref *authenticationv1.BoundObjectReference) (*corev1.Secret, error) {
	if ref == nil {
		return nil, nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if gvk.Group != "" || gvk.Kind != "Secret" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind a token to an object of type %s: only Secrets are supported", gvk))
	}
	secret, err := r.cfg.Secrets.Get(ctx, cluster, namespace, ref.Name, HasUID[*corev1.Secret](ref.UID))
	if err != nil {
		return nil, apiError(corev1.Resource("secrets"), ref.Name, err)
	}
	if ref.UID != "" && secret.UID != ref.UID {
		return nil, apierrors.NewConflict(corev1.Resource("secrets"), ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record; the object might have been deleted and then recreated", ref.UID))
	}
	if secret.DeletionTimestamp != nil {
		return nil, apierrors.NewConflict(corev1.Resource("secrets"), ref.Name, errors.New("the secret is being deleted"))
	}
	return secret, nil
}

// apiError turns a lookup error into a Status error clients understand.
func apiError(resource schema.GroupResource, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(resource, name)
	}
	var status *apierrors.StatusError
	if errors.As(err, &status) {
		return status
	}
	return apierrors.NewInternalError(fmt.Errorf("looking up %s %q: %w", resource, name, err))
}
