package customresources

import (
	"errors"
	"net/http"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// CRDGetter returns the CustomResourceDefinition serving group/resource
// (resource is the plural name) in a logical cluster, or an error for which
// apierrors.IsNotFound is true.
type CRDGetter func(cluster logicalcluster.Name, group, resource string) (*apiextensionsv1.CustomResourceDefinition, error)

// CRDsNamedGetter returns the CustomResourceDefinitions named
// <resource>.<group> (resource is the plural name) of every logical cluster
// of the shard, in any state; none is an empty list (or an error for which
// apierrors.IsNotFound is true). It serves wildcard (/clusters/*) list and
// watch requests. The objects are not modified.
type CRDsNamedGetter func(group, resource string) ([]*apiextensionsv1.CustomResourceDefinition, error)

// BoundCRDsGetter returns the CRDs that serve group/resource (resource is
// the plural name) bound through APIExports with the identity hash
// identity, anywhere on the shard (see the annotation apis.kcp.io/identity);
// none is an empty list. It serves wildcard list and watch requests for
// <resource>:<identity>, the apiexport virtual workspace's view of all
// consumers of an export. The objects are not modified.
type BoundCRDsGetter func(group, resource, identity string) ([]*apiextensionsv1.CustomResourceDefinition, error)

// Defaults for the serving-state cache.
const (
	// DefaultIdleTimeout is how long an unused serving state is kept.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultMaxEntries bounds the number of idle serving states kept;
	// states in use (requests and watches in flight) are never dropped.
	DefaultMaxEntries = 1000
	// DefaultMinRequestTimeout is the lower bound of a watch's random timeout.
	DefaultMinRequestTimeout = 30 * time.Minute
)

// Config is what a Handler needs.
type Config struct {
	// CRDs finds the CRD of a request. Required.
	CRDs CRDGetter
	// CRDsNamed finds the CRDs of a name in all logical clusters, from which
	// wildcard list and watch requests are served schema-agnostically. When
	// nil, wildcard requests for custom resources get 404.
	CRDsNamed CRDsNamedGetter
	// BoundCRDs finds the CRDs of an identity for wildcard requests of
	// <resource>:<identity>. When nil, they get 404.
	BoundCRDs BoundCRDsGetter
	// BoundIdentities returns the identities a group/resource is bound
	// under on the shard. A wildcard request for a resource without an
	// identity that no CRD serves is served from the identity when there
	// is exactly one. May be nil.
	BoundIdentities func(group, resource string) ([]string, error)
	// RESTOptionsGetter hands out the storage of every CRD version; see the
	// package documentation for what it must provide. Required.
	RESTOptionsGetter generic.RESTOptionsGetter
	// Authorizer authorizes the create part of create-on-update and
	// server-side apply. Required.
	Authorizer authorizer.UnconditionalAuthorizer
	// Admission runs on writes; may be nil.
	Admission admission.Interface
	// MaxRequestBodyBytes limits write request bodies; 0 means no limit.
	MaxRequestBodyBytes int64
	// MinRequestTimeout is the lower bound of a watch's random timeout.
	MinRequestTimeout time.Duration
	// NotFound serves requests that no CRD serves. When nil, they get a
	// NotFound Status.
	NotFound http.Handler
	// IdleTimeout releases serving state unused this long.
	IdleTimeout time.Duration
	// MaxEntries bounds the idle serving states kept (LRU); states in use
	// are never dropped.
	MaxEntries int
}

// complete checks the required fields and fills in defaults.
func (c Config) complete() (Config, error) {
	var errs []error
	if c.CRDs == nil {
		errs = append(errs, errors.New("CRDs is required"))
	}
	if c.RESTOptionsGetter == nil {
		errs = append(errs, errors.New("RESTOptionsGetter is required"))
	}
	if c.Authorizer == nil {
		errs = append(errs, errors.New("Authorizer is required"))
	}
	if c.MaxRequestBodyBytes < 0 {
		errs = append(errs, errors.New("MaxRequestBodyBytes must not be negative"))
	}
	if c.IdleTimeout < 0 || c.MaxEntries < 0 || c.MinRequestTimeout < 0 {
		errs = append(errs, errors.New("IdleTimeout, MaxEntries and MinRequestTimeout must not be negative"))
	}
	if len(errs) > 0 {
		return c, utilerrors.NewAggregate(errs)
	}
	if c.Admission == nil {
		c.Admission = admission.NewChainHandler()
	}
	if c.MinRequestTimeout == 0 {
		c.MinRequestTimeout = DefaultMinRequestTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	return c, nil
}
