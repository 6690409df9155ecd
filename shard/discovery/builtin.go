package discovery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/utils/clock"
)

// Accept headers of the in-process requests for the built-in documents.
const (
	acceptAggregatedV2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptJSON         = "application/json"
)

// builtins are the documents the wrapped handler serves for every logical
// cluster, captured from it on first use and revalidated at most every
// recheck.
//
// Cache audit (issue 9): not cluster-dependent: built-in APIs are the same
// in every logical cluster; CRDs are merged in per cluster from clusterCache.
type builtins struct {
	apis *builtinDoc[*builtinAPIs]
	// core is the aggregated discovery of /api, fetched only for clusters
	// with CRDs of the core group.
	core      *builtinDoc[*builtinAPIs]
	openAPIV3 *builtinDoc[*handler3.OpenAPIV3Discovery]
	openAPIV2 *builtinDoc[*spec.Swagger]
}

func newBuiltins(next http.Handler, clk clock.PassiveClock, recheck time.Duration) *builtins {
	return &builtins{
		apis:      newBuiltinDoc(next, clk, recheck, "/apis", acceptAggregatedV2, parseBuiltinAPIs),
		core:      newBuiltinDoc(next, clk, recheck, "/api", acceptAggregatedV2, parseBuiltinAPIs),
		openAPIV3: newBuiltinDoc(next, clk, recheck, "/openapi/v3", acceptJSON, parseJSON[handler3.OpenAPIV3Discovery]),
		openAPIV2: newBuiltinDoc(next, clk, recheck, "/openapi/v2", acceptJSON, parseJSON[spec.Swagger]),
	}
}

// builtinAPIs is the built-in aggregated discovery document of /apis (or of
// /api, whose one group is the core group "").
type builtinAPIs struct {
	list apidiscoveryv2.APIGroupDiscoveryList
	// gvs holds the names (resources and kinds) each built-in group version
	// serves.
	gvs map[schema.GroupVersion]sets.Set[string]
}

func parseBuiltinAPIs(data []byte) (*builtinAPIs, error) {
	b := &builtinAPIs{gvs: map[schema.GroupVersion]sets.Set[string]{}}
	if err := json.Unmarshal(data, &b.list); err != nil {
		return nil, err
	}
	for _, g := range b.list.Items {
		for _, v := range g.Versions {
			names := sets.New[string]()
			for _, r := range v.Resources {
				names.Insert(resourceName(r.Resource))
				if r.ResponseKind != nil {
					names.Insert(kindName(r.ResponseKind.Kind))
				}
			}
			b.gvs[schema.GroupVersion{Group: g.Name, Version: v.Version}] = names
		}
	}
	return b, nil
}

// resourceName and kindName keep resources and kinds apart in one set.
func resourceName(resource string) string { return "resource " + resource }
func kindName(kind string) string         { return "kind " + kind }

// hasGroup tells whether a group is built in.
func (b *builtinAPIs) hasGroup(group string) bool {
	for _, g := range b.list.Items {
		if g.Name == group {
			return true
		}
	}
	return false
}

// hasGroupVersion tells whether a group version is built in.
func (b *builtinAPIs) hasGroupVersion(gv schema.GroupVersion) bool {
	_, ok := b.gvs[gv]
	return ok
}

// serves tells whether a built-in group version has a resource of this
// name or kind. A CRD resource that does is left out of the group version:
// requests for it reach the built-in resource.
func (b *builtinAPIs) serves(gv schema.GroupVersion, resource, kind string) bool {
	names := b.gvs[gv]
	return names.Has(resourceName(resource)) || names.Has(kindName(kind))
}

func parseJSON[T any](data []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return v, nil
}

// builtinDoc captures one document from the wrapped handler.
type builtinDoc[T any] struct {
	next    http.Handler
	clock   clock.PassiveClock
	recheck time.Duration
	path    string
	accept  string
	parse   func([]byte) (T, error)

	// mu serialises fetches; readers load current without it.
	mu      sync.Mutex
	current atomic.Pointer[snapshot[T]]
}

// snapshot is one captured version of a document. Its identity changes only
// when the content does, so documents derived from it can be cached by
// pointer.
type snapshot[T any] struct {
	value T
	// etag is the quoted ETag the wrapped handler sent, if any.
	etag string
	// sum identifies the content when there is no ETag.
	sum [sha256.Size]byte
	// checked is when the snapshot was last found current (Unix nanoseconds).
	checked atomic.Int64
}

func newBuiltinDoc[T any](next http.Handler, clk clock.PassiveClock, recheck time.Duration, path, accept string, parse func([]byte) (T, error)) *builtinDoc[T] {
	return &builtinDoc[T]{next: next, clock: clk, recheck: recheck, path: path, accept: accept, parse: parse}
}

// fresh tells whether s can be used without asking the wrapped handler.
func (d *builtinDoc[T]) fresh(s *snapshot[T], now time.Time) bool {
	return s != nil && (d.recheck < 0 || now.Sub(time.Unix(0, s.checked.Load())) < d.recheck)
}

// get returns the current snapshot, fetching or revalidating it when due.
// When revalidation fails, the last good snapshot is kept.
func (d *builtinDoc[T]) get(ctx context.Context) (*snapshot[T], error) {
	if s := d.current.Load(); d.fresh(s, d.clock.Now()) {
		return s, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.Now()
	s := d.current.Load()
	if d.fresh(s, now) {
		return s, nil
	}
	next, err := d.fetch(ctx, s)
	if err != nil {
		if s == nil {
			return nil, fmt.Errorf("getting the built-in %s: %w", d.path, err)
		}
		klog.FromContext(ctx).Error(err, "Keeping the last built-in document", "path", d.path)
		next = s
	}
	next.checked.Store(now.UnixNano())
	d.current.Store(next)
	return next, nil
}

// fetch asks the wrapped handler for the document, conditionally on old's
// ETag, and returns old if it is unchanged.
func (d *builtinDoc[T]) fetch(ctx context.Context, old *snapshot[T]) (*snapshot[T], error) {
	var etag string
	if old != nil {
		etag = old.etag
	}
	rec, err := getInProcess(ctx, d.next, d.path, d.accept, etag)
	if err != nil {
		return nil, err
	}
	switch rec.code() {
	case http.StatusNotModified:
		if old == nil {
			return nil, fmt.Errorf("unexpected %d", rec.code())
		}
		return old, nil
	case http.StatusOK:
	default:
		return nil, fmt.Errorf("status %d: %s", rec.code(), truncate(rec.body.Bytes(), 200))
	}
	sum := sha256.Sum256(rec.body.Bytes())
	if old != nil && old.sum == sum {
		return old, nil
	}
	value, err := d.parse(rec.body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	s := &snapshot[T]{value: value, etag: rec.header.Get("ETag"), sum: sum}
	if _, err := strconv.Unquote(s.etag); err != nil {
		s.etag = ""
	}
	return s, nil
}

// truncate shortens a response body for an error message.
func truncate(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
