package syncer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/lru"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// PathPrefix is where the syncer virtual workspace is served.
const PathPrefix = "/services/syncer/"

// UpsyncerPathPrefix is where the upsyncer virtual workspace is served.
const UpsyncerPathPrefix = "/services/upsyncer/"

// maxBodyBytes bounds a write the syncer sends (as the shard would).
const maxBodyBytes = 3 << 20

// Config is what the handler needs.
type Config struct {
	// Shard reaches the shard as its admin (system:masters).
	Shard *rest.Config
	// Authorizer decides in the logical cluster of its context.
	Authorizer authorizer.Authorizer
	// Remote, if set, returns the client configuration (a shard admin's)
	// of the other shard that holds a SyncTarget's logical cluster, or
	// false when it is on this shard (remote.go).
	Remote func(context.Context, logicalcluster.Name) (*rest.Config, bool)
}

type handler struct {
	cfg       Config
	base      string
	transport http.RoundTripper
	codecs    runtime.NegotiatedSerializer
	// prefix is PathPrefix or UpsyncerPathPrefix; state is the state of
	// the objects served there (Sync or Upsync).
	prefix string
	state  workloadv1alpha1.ResourceState
	// remote reaches the shards of SyncTargets of other shards; nil
	// without Config.Remote.
	remote *remoteTargets
	// targets caches SyncTargets read from the shard for syncTargetTTL,
	// by cluster|name: a syncer's writes come in bursts, each of which
	// would read its SyncTarget again.
	targets *lru.Cache
}

// syncTargetTTL is how long a SyncTarget read from the shard is used: a
// change of its synced resources, or its deletion, takes effect here that
// much later at most.
const syncTargetTTL = time.Second

type cachedTarget struct {
	st *workloadv1alpha1.SyncTarget
	at time.Time
}

// New returns the handler of the syncer virtual workspace (under
// PathPrefix) and of the upsyncer virtual workspace (under
// UpsyncerPathPrefix). It serves authenticated requests (the user in the
// request context) and starts nothing.
//
// The upsyncer virtual workspace is a syncer's view of the objects in
// Upsync state for its SyncTarget (those it makes upstream from its
// physical cluster, such as PersistentVolumes). There the syncer creates,
// updates and deletes objects of its synced resources, which always carry
// the label state.workload.kcp.io/<key>=Upsync (set on the way in); it
// sees and changes no other object.
func New(c Config) (http.Handler, error) {
	if c.Shard == nil || c.Authorizer == nil {
		return nil, errors.New("syncer virtual workspace: Shard and Authorizer are required")
	}
	base, transport, err := forward.Shard(c.Shard)
	if err != nil {
		return nil, fmt.Errorf("syncer virtual workspace: %w", err)
	}
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	syncer := &handler{cfg: c, base: base, transport: transport, codecs: serializer.NewCodecFactory(scheme).WithoutConversion(), targets: lru.New(4096),
		prefix: PathPrefix, state: workloadv1alpha1.ResourceStateSync}
	if c.Remote != nil {
		if syncer.remote, err = newRemoteTargets(c.Shard, c.Remote); err != nil {
			return nil, fmt.Errorf("syncer virtual workspace: %w", err)
		}
	}
	upsyncer := *syncer
	upsyncer.prefix, upsyncer.state = UpsyncerPathPrefix, workloadv1alpha1.ResourceStateUpsync
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, UpsyncerPathPrefix) {
			upsyncer.ServeHTTP(w, req)
			return
		}
		syncer.ServeHTTP(w, req)
	}), nil
}

// Handles tells whether path is one of the syncer or upsyncer virtual
// workspace's.
func Handles(path string) bool {
	return strings.HasPrefix(path, PathPrefix) || strings.HasPrefix(path, UpsyncerPathPrefix)
}

// target is a parsed request path.
type target struct {
	syncTargetCluster logicalcluster.Name
	syncTargetName    string
	uid               string
	cluster           logicalcluster.Cluster
	segments          []string
}

// parse splits an escaped path under prefix.
func parse(escaped, prefix string) (target, error) {
	rest, ok := strings.CutPrefix(escaped, prefix)
	if !ok {
		return target{}, forward.ErrPathNotFound()
	}
	parts := strings.SplitN(rest, "/", 6)
	if len(parts) < 5 || parts[3] != "clusters" {
		return target{}, forward.ErrPathNotFound()
	}
	var un [5]string
	for i := range un {
		s, err := url.PathUnescape(parts[i])
		if err != nil || s == "" {
			return target{}, forward.ErrPathNotFound()
		}
		un[i] = s
	}
	t := target{syncTargetCluster: logicalcluster.Name(un[0]), syncTargetName: un[1], uid: un[2]}
	if !t.syncTargetCluster.IsValid() {
		return target{}, forward.ErrPathNotFound()
	}
	switch c := un[4]; {
	case c == string(logicalcluster.Wildcard):
		t.cluster = logicalcluster.Cluster{Wildcard: true}
	case logicalcluster.Name(c).IsValid():
		t.cluster = logicalcluster.Cluster{Name: logicalcluster.Name(c)}
	default:
		return target{}, apierrors.NewBadRequest(fmt.Sprintf("invalid logical cluster name %q: %s", c, logicalcluster.ValidationMessage))
	}
	if len(parts) == 6 {
		var err error
		if t.segments, err = forward.Segments(parts[5]); err != nil {
			return target{}, err
		}
	}
	return t, nil
}

// IsLongRunning tells whether a request to the virtual workspace may stay
// open for long (watches). Mount it in the server's LongRunningFunc.
func IsLongRunning(req *http.Request) bool {
	// <cluster>/<synctarget>/<uid>/clusters/<name>/...
	return forward.IsLongRunning(req, PathPrefix, 5) || forward.IsLongRunning(req, UpsyncerPathPrefix, 5)
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	t, err := parse(req.URL.EscapedPath(), h.prefix)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	logger := klog.FromContext(req.Context()).WithValues("syncTarget", t.syncTargetCluster.String()+"|"+t.syncTargetName)
	ctx := klog.NewContext(req.Context(), logger)
	req = req.WithContext(ctx)
	if err := h.authorize(ctx, t); err != nil {
		h.writeError(w, req, err)
		return
	}
	st, err := h.syncTarget(ctx, t)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	r, err := route(req, t, st, h.state == workloadv1alpha1.ResourceStateUpsync)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	key := workloadv1alpha1.ToSyncTargetKey(t.syncTargetCluster.String(), t.syncTargetName)
	switch r.verb {
	case "list", "watch":
		h.list(w, req, r, key)
	case "get":
		obj, status, err := h.read(ctx, r.resource, r.objectPath, key)
		if err != nil {
			h.writeError(w, req, err)
			return
		}
		if status != nil {
			h.writeRaw(w, status.code, status.body)
			return
		}
		h.present(obj, key)
		h.writeJSON(w, http.StatusOK, obj)
	case "update", "patch":
		h.bindClaim(ctx, t, st, r, key, h.write(w, req, r, key))
	case "create":
		h.bindClaim(ctx, t, st, r, key, h.create(w, req, r, key))
	case "delete":
		h.delete(w, req, r, key)
	default:
		h.writeError(w, req, apierrors.NewMethodNotSupported(r.resource, r.verb))
	}
}

// authorize allows the request if the user may sync the SyncTarget.
func (h *handler) authorize(ctx context.Context, t target) error {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return apierrors.NewUnauthorized("no user")
	}
	attrs := authorizer.AttributesRecord{
		User:            u,
		Verb:            "sync",
		APIGroup:        workloadv1alpha1.SchemeGroupVersion.Group,
		APIVersion:      workloadv1alpha1.SchemeGroupVersion.Version,
		Resource:        "synctargets",
		Name:            t.syncTargetName,
		ResourceRequest: true,
	}
	stCtx := logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: t.syncTargetCluster})
	if d, _, err := h.authorizerFor(ctx, t.syncTargetCluster).Authorize(stCtx, attrs); err == nil && d == authorizer.DecisionAllow {
		return nil
	}
	return apierrors.NewForbidden(workloadv1alpha1.Resource("synctargets"), t.syncTargetName,
		fmt.Errorf("user %q cannot sync SyncTarget %s in %s", u.GetName(), t.syncTargetName, t.syncTargetCluster))
}

// syncTarget returns the SyncTarget, read from the shard at most
// syncTargetTTL ago; a missing one, or one with another UID, is NotFound.
func (h *handler) syncTarget(ctx context.Context, t target) (*workloadv1alpha1.SyncTarget, error) {
	cacheKey := t.syncTargetCluster.String() + "|" + t.syncTargetName
	if v, ok := h.targets.Get(cacheKey); ok {
		if c := v.(cachedTarget); time.Since(c.at) < syncTargetTTL && string(c.st.UID) == t.uid {
			return c.st, nil
		}
	}
	st, err := h.readSyncTarget(ctx, t)
	if err == nil {
		h.targets.Add(cacheKey, cachedTarget{st: st, at: time.Now()})
	}
	return st, err
}

// readSyncTarget reads the SyncTarget from the shard.
func (h *handler) readSyncTarget(ctx context.Context, t target) (*workloadv1alpha1.SyncTarget, error) {
	p := "/clusters/" + t.syncTargetCluster.String() + "/apis/workload.kcp.io/v1alpha1/synctargets/" + url.PathEscape(t.syncTargetName)
	base, transport := h.shardFor(ctx, t.syncTargetCluster)
	resp, err := get(ctx, base, transport, p, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	notFound := apierrors.NewNotFound(workloadv1alpha1.Resource("synctargets"), t.syncTargetName)
	if resp.StatusCode == http.StatusNotFound {
		return nil, notFound
	}
	if resp.StatusCode != http.StatusOK {
		return nil, apierrors.NewInternalError(fmt.Errorf("reading SyncTarget %s|%s: the shard answered %d", t.syncTargetCluster, t.syncTargetName, resp.StatusCode))
	}
	st := &workloadv1alpha1.SyncTarget{}
	if err := json.NewDecoder(resp.Body).Decode(st); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("decoding SyncTarget %s|%s: %w", t.syncTargetCluster, t.syncTargetName, err))
	}
	if string(st.UID) != t.uid {
		return nil, notFound
	}
	return st, nil
}

// routed is a resource request: its verb, the resource, and its paths on
// the shard.
type routed struct {
	verb     string
	resource schema.GroupResource
	// shardPath is the path to forward to (identity-qualified).
	shardPath string
	// objectPath is the path of the object itself (without a
	// subresource), for get, update and patch.
	objectPath string
}

// route parses the segments after /clusters/<c> of a resource request of
// a synced resource.
func route(req *http.Request, t target, st *workloadv1alpha1.SyncTarget, upsync bool) (routed, error) {
	seg := t.segments
	var prefix, rest []string
	var gv schema.GroupVersion
	switch {
	case len(seg) > 2 && seg[0] == "api" && seg[1] == "v1":
		prefix, rest, gv = seg[:2], seg[2:], schema.GroupVersion{Version: "v1"}
	case len(seg) > 3 && seg[0] == "apis":
		prefix, rest, gv = seg[:3], seg[3:], schema.GroupVersion{Group: seg[1], Version: seg[2]}
	default:
		// Discovery is not served: a syncer knows its resources from the
		// SyncTarget's status.syncedResources.
		return routed{}, forward.ErrPathNotFound()
	}
	prefix = append([]string(nil), prefix...)
	legacyWatch := false
	if rest[0] == "watch" {
		legacyWatch, rest = true, rest[1:]
		prefix = append(prefix, "watch")
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		prefix = append(prefix, "namespaces", rest[1])
		rest = rest[2:]
	}
	if len(rest) == 0 || len(rest) > 3 {
		return routed{}, forward.ErrPathNotFound()
	}
	gr := schema.GroupResource{Group: gv.Group, Resource: rest[0]}
	synced, identity := syncedResource(st, gr, gv.Version)
	if !synced {
		return routed{}, forward.ErrPathNotFound()
	}
	named := len(rest) >= 2
	verb := verbOf(req, named, legacyWatch)
	if !upsync && (verb == "create" || verb == "delete") || verb == "deletecollection" {
		// The syncer neither makes nor removes upstream objects; the
		// upsyncer does, one by one.
		return routed{}, apierrors.NewMethodNotSupported(gr, verb)
	}
	if (verb == "get" || verb == "update" || verb == "patch" || verb == "create" || verb == "delete") && t.cluster.Wildcard {
		return routed{}, apierrors.NewMethodNotSupported(gr, verb+" across all logical clusters")
	}
	if verb == "" || (len(rest) == 3 && rest[2] != "status") {
		return routed{}, forward.ErrPathNotFound()
	}
	resource := rest[0]
	if identity != "" {
		resource += ":" + identity
	}
	clusterSegment := string(logicalcluster.Wildcard)
	if !t.cluster.Wildcard {
		clusterSegment = t.cluster.Name.String()
	}
	base := "/clusters/" + clusterSegment + forward.Join(append(prefix, resource))
	r := routed{verb: verb, resource: gr, shardPath: base + forward.Join(rest[1:])}
	if named {
		r.objectPath = base + forward.Join(rest[1:2])
	}
	return r, nil
}

// syncedResource tells whether the SyncTarget syncs gr in version, and
// the identity of the export it comes from ("" for built-in resources).
func syncedResource(st *workloadv1alpha1.SyncTarget, gr schema.GroupResource, version string) (bool, string) {
	for _, r := range st.Status.SyncedResources {
		if r.Group != gr.Group || r.Resource != gr.Resource || r.State != workloadv1alpha1.ResourceSchemaAcceptedState {
			continue
		}
		for _, v := range r.Versions {
			if v == version {
				return true, r.IdentityHash
			}
		}
	}
	return false, ""
}

// verbOf is the API verb of a resource request; "" for a write of a
// collection the syncer cannot mean.
func verbOf(req *http.Request, named, legacyWatch bool) string {
	verb := forward.Verb(req, named, legacyWatch)
	if (verb == "update" || verb == "patch") && !named {
		return ""
	}
	return verb
}

// stateSelector returns the request's label selector with the state label
// of key added.
func stateSelector(query url.Values, key string, value workloadv1alpha1.ResourceState) (string, error) {
	state := labels.Set{workloadv1alpha1.ClusterResourceStateLabelPrefix + key: string(value)}.String()
	given := query.Get("labelSelector")
	if given == "" {
		return state, nil
	}
	if _, err := labels.Parse(given); err != nil {
		return "", apierrors.NewBadRequest(fmt.Sprintf("invalid labelSelector %q: %v", given, err))
	}
	return given + "," + state, nil
}

// list forwards a list or watch with the state selector and presents the
// objects.
func (h *handler) list(w http.ResponseWriter, req *http.Request, r routed, key string) {
	query := req.URL.Query()
	selector, err := stateSelector(query, key, h.state)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	query.Set("labelSelector", selector)
	resp, err := h.shardGet(req.Context(), r.shardPath, query)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.copyResponse(w, resp)
		return
	}
	if r.verb == "watch" {
		h.presentWatch(w, req, resp.Body, key)
		return
	}
	var doc map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		h.writeError(w, req, apierrors.NewInternalError(fmt.Errorf("decoding the shard's answer: %w", err)))
		return
	}
	if raw, ok := doc["items"]; ok {
		var items []map[string]any
		if err := json.Unmarshal(raw, &items); err != nil {
			h.writeError(w, req, apierrors.NewInternalError(fmt.Errorf("decoding the shard's items: %w", err)))
			return
		}
		for _, item := range items {
			h.present(item, key)
		}
		doc["items"], _ = json.Marshal(items)
	}
	h.writeJSON(w, http.StatusOK, doc)
}

// presentWatch copies the JSON watch events, presenting their objects.
func (h *handler) presentWatch(w http.ResponseWriter, req *http.Request, body io.Reader, key string) {
	forward.CopyWatch(w, req, body, func(ev *forward.WatchEvent) bool {
		switch ev.Type {
		case "ADDED", "MODIFIED", "DELETED":
		default:
			return true
		}
		var obj map[string]any
		if err := json.Unmarshal(ev.Object, &obj); err != nil {
			return false
		}
		h.present(obj, key)
		raw, err := json.Marshal(obj)
		if err != nil {
			return false
		}
		ev.Object = raw
		return true
	})
}

// answer is a shard's non-200 answer, passed on as it is.
type answer struct {
	code int
	body []byte
}

// read gets an object from the shard; one without the state label of key
// is NotFound (the syncer does not see it). A non-200 answer of the shard
// comes back as an answer.
func (h *handler) read(ctx context.Context, gr schema.GroupResource, objectPath, key string) (map[string]any, *answer, error) {
	resp, err := h.shardGet(ctx, objectPath, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, nil, apierrors.NewServiceUnavailable(fmt.Sprintf("reading the shard's answer: %v", err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &answer{code: resp.StatusCode, body: body}, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("decoding the shard's answer: %w", err))
	}
	meta, _ := obj["metadata"].(map[string]any)
	lbls, _ := meta["labels"].(map[string]any)
	if lbls[workloadv1alpha1.ClusterResourceStateLabelPrefix+key] != string(h.state) {
		name, _ := meta["name"].(string)
		return nil, nil, apierrors.NewNotFound(gr, name)
	}
	return obj, nil, nil
}

// write forwards an update or patch of an object the syncer sees, and
// presents the result.
//
// On the object itself (not its status) a syncer only adds or removes
// finalizers: an update is applied as the current object with the
// finalizers (and the resourceVersion, for optimistic concurrency) of the
// one sent; a patch is refused.
func (h *handler) write(w http.ResponseWriter, req *http.Request, r routed, key string) map[string]any {
	ctx := req.Context()
	current, status, err := h.read(ctx, r.resource, r.objectPath, key)
	if err != nil || status != nil {
		if err != nil {
			h.writeError(w, req, err)
		} else {
			h.writeRaw(w, status.code, status.body)
		}
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBodyBytes+1))
	if err != nil {
		h.writeError(w, req, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err)))
		return nil
	}
	if len(body) > maxBodyBytes {
		h.writeError(w, req, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d bytes", maxBodyBytes)))
		return nil
	}
	if r.shardPath == r.objectPath {
		if r.verb != "update" {
			h.writeError(w, req, apierrors.NewMethodNotSupported(r.resource, "patch (the syncer updates the object, or patches its status)"))
			return nil
		}
		if h.state == workloadv1alpha1.ResourceStateUpsync {
			body, err = withState(body, key, h.state)
		} else {
			body, err = finalizersOnly(current, body)
		}
		if err != nil {
			h.writeError(w, req, err)
			return nil
		}
	}
	return h.forwardWrite(w, req, r.shardPath, body, key)
}

// create forwards the creation of an object in Upsync state: the label
// state.workload.kcp.io/<key>=Upsync is set on it.
func (h *handler) create(w http.ResponseWriter, req *http.Request, r routed, key string) map[string]any {
	body, err := readBody(req)
	if err == nil {
		body, err = withState(body, key, h.state)
	}
	if err != nil {
		h.writeError(w, req, err)
		return nil
	}
	return h.forwardWrite(w, req, r.shardPath, body, key)
}

// delete forwards the deletion of an object the upsyncer sees.
func (h *handler) delete(w http.ResponseWriter, req *http.Request, r routed, key string) {
	if _, status, err := h.read(req.Context(), r.resource, r.objectPath, key); err != nil || status != nil {
		if err != nil {
			h.writeError(w, req, err)
		} else {
			h.writeRaw(w, status.code, status.body)
		}
		return
	}
	body, err := readBody(req)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	h.forwardWrite(w, req, r.shardPath, body, key)
}

// readBody reads a request body up to maxBodyBytes.
func readBody(req *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(body) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d bytes", maxBodyBytes))
	}
	return body, nil
}

// withState returns the JSON object body with the state label of key set
// to state.
func withState(body []byte, key string, state workloadv1alpha1.ResourceState) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, apierrors.NewBadRequest("the upsyncer virtual workspace takes JSON objects")
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	lbls, _ := meta["labels"].(map[string]any)
	if lbls == nil {
		lbls = map[string]any{}
		meta["labels"] = lbls
	}
	lbls[workloadv1alpha1.ClusterResourceStateLabelPrefix+key] = string(state)
	return json.Marshal(obj)
}

// forwardWrite sends a write to the shard at path and passes on its
// answer, presented.
func (h *handler) forwardWrite(w http.ResponseWriter, req *http.Request, path string, body []byte, key string) map[string]any {
	ctx := req.Context()
	u, err := url.Parse(h.base + path)
	if err != nil {
		h.writeError(w, req, apierrors.NewBadRequest(fmt.Sprintf("invalid path: %v", err)))
		return nil
	}
	u.RawQuery = req.URL.RawQuery
	out, err := http.NewRequestWithContext(ctx, req.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		h.writeError(w, req, apierrors.NewBadRequest(err.Error()))
		return nil
	}
	out.Header.Set("Content-Type", req.Header.Get("Content-Type"))
	out.Header.Set("Accept", "application/json")
	resp, err := h.transport.RoundTrip(out)
	if err != nil {
		h.writeError(w, req, apierrors.NewServiceUnavailable(fmt.Sprintf("the shard did not answer: %v", err)))
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		h.copyResponse(w, resp)
		return nil
	}
	var obj map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		h.writeError(w, req, apierrors.NewInternalError(fmt.Errorf("decoding the shard's answer: %w", err)))
		return nil
	}
	h.present(obj, key)
	h.writeJSON(w, resp.StatusCode, obj)
	return obj
}

// finalizersOnly returns the current object with the finalizers and the
// resourceVersion of the sent one.
func finalizersOnly(current map[string]any, body []byte) ([]byte, error) {
	var sent struct {
		Metadata struct {
			Finalizers      []string `json:"finalizers"`
			ResourceVersion string   `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the syncer virtual workspace takes JSON: %v", err))
	}
	meta, _ := current["metadata"].(map[string]any)
	if meta == nil {
		return nil, apierrors.NewInternalError(errors.New("the shard's object has no metadata"))
	}
	if len(sent.Metadata.Finalizers) == 0 {
		delete(meta, "finalizers")
	} else {
		meta["finalizers"] = sent.Metadata.Finalizers
	}
	if sent.Metadata.ResourceVersion != "" {
		meta["resourceVersion"] = sent.Metadata.ResourceVersion
	}
	return json.Marshal(current)
}

// present shows the SyncTarget's deletion time of an object as its
// deletionTimestamp, unless it has one of its own; the upsyncer's objects
// are shown as they are.
func (h *handler) present(obj map[string]any, key string) {
	if h.state == workloadv1alpha1.ResourceStateUpsync {
		return
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	ann, _ := meta["annotations"].(map[string]any)
	t, ok := ann[workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix+key].(string)
	if !ok || t == "" {
		return
	}
	if _, deleting := meta["deletionTimestamp"]; !deleting {
		meta["deletionTimestamp"] = t
	}
}

// shardGet sends a GET for JSON to the shard.
func (h *handler) shardGet(ctx context.Context, path string, query url.Values) (*http.Response, error) {
	return get(ctx, h.base, h.transport, path, query)
}

// get sends a GET for JSON to the shard at base.
func get(ctx context.Context, base string, transport http.RoundTripper, path string, query url.Values) (*http.Response, error) {
	u, err := url.Parse(base + path)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid path: %v", err))
	}
	if query != nil {
		u.RawQuery = query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	req.Header.Set("Accept", "application/json")
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("the shard did not answer: %v", err))
	}
	return resp, nil
}

func (h *handler) copyResponse(w http.ResponseWriter, resp *http.Response) {
	forward.RemoveHopHeaders(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func (h *handler) writeRaw(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func (h *handler) writeJSON(w http.ResponseWriter, code int, obj any) {
	forward.WriteJSON(w, code, obj)
}

func (h *handler) writeError(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, h.codecs, schema.GroupVersion{Version: "v1"}, w, req)
}
