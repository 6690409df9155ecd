package initializingworkspaces

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
)

// writeKind is the kind of a status write.
type writeKind int

const (
	statusUpdate writeKind = iota
	statusPatch
)

// maxAttempts bounds how often a status write is computed again when the
// LogicalCluster changed underneath it.
const maxAttempts = 5

// maxJSONPatchOperations is the API server's limit.
const maxJSONPatchOperations = 10000

// writeStatus serves PUT and PATCH of logicalclusters/cluster/status.
//
// It reads the live LogicalCluster, computes the new one (the body of a
// PUT, a JSON or merge patch applied here, an apply patch computed by the
// shard as a dry run), refuses it unless it only removes the initializer
// from status.initializers, and writes it with the resourceVersion it was
// computed from as a precondition, so that what was checked is what is
// written. When the LogicalCluster changed in between, it starts over, as
// the API server does for patches; a resourceVersion the client set
// itself stays a precondition and fails with 409 Conflict.
func (h *handler) writeStatus(w http.ResponseWriter, req *http.Request, t target, kind writeKind) {
	body, err := h.readBody(req)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	mediaType := ""
	if ct := req.Header.Get("Content-Type"); ct != "" {
		if mediaType, _, err = mime.ParseMediaType(ct); err != nil {
			h.writeError(w, req, unsupportedMediaType(ct))
			return
		}
	}
	write, precondition, err := h.writerFor(kind, mediaType, body)
	if err != nil {
		h.writeError(w, req, err)
		return
	}
	for attempt := 1; ; attempt++ {
		resp, err := write(req.Context(), req, t)
		if err != nil {
			h.writeError(w, req, err)
			return
		}
		if resp.code == http.StatusConflict && !precondition && attempt < maxAttempts {
			continue
		}
		resp.write(w)
		return
	}
}

// writerFor returns the writer of a status write with a body of the media
// type, and whether the body sets a resourceVersion: then a conflict is
// the client's to handle, not retried.
func (h *handler) writerFor(kind writeKind, mediaType string, body []byte) (writer, bool, error) {
	switch {
	case kind == statusUpdate:
		switch mediaType {
		case "", "application/json":
		case "application/yaml":
			var err error
			if body, err = utilyaml.ToJSON(body); err != nil {
				return nil, false, apierrors.NewBadRequest(fmt.Sprintf("invalid YAML: %v", err))
			}
		default:
			return nil, false, unsupportedMediaType(mediaType)
		}
		return h.computed(func([]byte) ([]byte, error) { return body, nil }), hasResourceVersion(body), nil
	case mediaType == string(types.JSONPatchType):
		patch, err := jsonpatch.DecodePatch(body)
		if err != nil {
			return nil, false, apierrors.NewBadRequest(err.Error())
		}
		if len(patch) > maxJSONPatchOperations {
			return nil, false, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(patch)))
		}
		return h.computed(func(cur []byte) ([]byte, error) {
			out, err := patch.Apply(cur)
			if err != nil {
				return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", logicalClustersGR, "", err.Error(), 0, false)
			}
			return out, nil
		}), touchesResourceVersion(patch), nil
	case mediaType == string(types.MergePatchType):
		return h.computed(func(cur []byte) ([]byte, error) {
			out, err := jsonpatch.MergePatch(cur, body)
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			return out, nil
		}), hasResourceVersion(body), nil
	case mediaType == string(types.ApplyYAMLPatchType):
		var err error
		if body, err = utilyaml.ToJSON(body); err != nil {
			return nil, false, apierrors.NewBadRequest(fmt.Sprintf("invalid apply configuration: %v", err))
		}
		return h.applied(body), hasResourceVersion(body), nil
	case mediaType == string(types.StrategicMergePatchType):
		return nil, false, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusUnsupportedMediaType,
			Reason:  metav1.StatusReasonUnsupportedMediaType,
			Message: "strategic merge patch is not supported for LogicalClusters in the initializing workspaces virtual workspace: use a JSON patch, a merge patch or server-side apply",
		}}
	default:
		return nil, false, unsupportedMediaType(mediaType)
	}
}

// writer makes one attempt at a status write.
type writer func(ctx context.Context, req *http.Request, t target) (*response, error)

// computed writes the LogicalCluster that compute makes of the live one.
func (h *handler) computed(compute func(cur []byte) ([]byte, error)) writer {
	return func(ctx context.Context, req *http.Request, t target) (*response, error) {
		cur, curJSON, err := h.initializing(ctx, t)
		if err != nil {
			return nil, err
		}
		newJSON, err := compute(curJSON)
		if err != nil {
			return nil, err
		}
		updated := &corev1alpha1.LogicalCluster{}
		if err := json.Unmarshal(newJSON, updated); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the new LogicalCluster cannot be decoded: %v", err))
		}
		// A stale object fails as the shard would fail it, not with what
		// it seems to change.
		if updated.ResourceVersion != "" && updated.ResourceVersion != cur.ResourceVersion {
			return nil, apierrors.NewConflict(logicalClustersGR, corev1alpha1.LogicalClusterName,
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))
		}
		// Without managed fields the shard keeps the live ones.
		if len(updated.ManagedFields) > 0 && !apiequality.Semantic.DeepEqual(updated.ManagedFields, cur.ManagedFields) {
			return nil, forbidden(fmt.Sprintf("initializer %q may only remove itself from status.initializers, it cannot change metadata.managedFields", t.initializer))
		}
		if err := checkStatusChange(t.initializer, cur, updated); err != nil {
			return nil, err
		}
		// A patched object carries the live resourceVersion; an update
		// without one gets it.
		if updated.ResourceVersion == "" {
			if newJSON, err = withResourceVersion(newJSON, cur.ResourceVersion); err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
		}
		hdr := jsonHeader(req)
		hdr.Set("Content-Type", "application/json")
		if a := req.Header.Get("Accept"); a != "" {
			hdr.Set("Accept", a)
		}
		return h.do(ctx, http.MethodPut, statusPath(t), req.URL.RawQuery, hdr, newJSON)
	}
}

// applied writes an apply configuration: the shard computes the result in
// a dry run, which is checked, then applies it for real with the same
// resourceVersion precondition.
func (h *handler) applied(config []byte) writer {
	return func(ctx context.Context, req *http.Request, t target) (*response, error) {
		cur, _, err := h.initializing(ctx, t)
		if err != nil {
			return nil, err
		}
		// The shard refuses to add initializers with 422 in the dry run;
		// refuse what the configuration sets with 403 like other writes.
		var set struct {
			Status struct {
				Initializers *[]corev1alpha1.LogicalClusterInitializer `json:"initializers"`
				Phase        *corev1alpha1.LogicalClusterPhaseType     `json:"phase"`
			} `json:"status"`
		}
		if err := json.Unmarshal(config, &set); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid apply configuration: %v", err))
		}
		configured := cur.DeepCopy()
		if set.Status.Initializers != nil {
			configured.Status.Initializers = *set.Status.Initializers
		}
		if set.Status.Phase != nil {
			configured.Status.Phase = *set.Status.Phase
		}
		if err := checkStatusChange(t.initializer, cur, configured); err != nil {
			return nil, err
		}
		body, err := withResourceVersion(config, cur.ResourceVersion)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		q, err := url.ParseQuery(req.URL.RawQuery)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid query: %v", err))
		}
		clientDryRun := len(q["dryRun"]) > 0
		q.Set("dryRun", metav1.DryRunAll)
		hdr := jsonHeader(req)
		hdr.Set("Content-Type", string(types.ApplyYAMLPatchType))
		dry, err := h.do(ctx, http.MethodPatch, statusPath(t), q.Encode(), hdr, body)
		if err != nil || dry.code != http.StatusOK {
			return dry, err
		}
		updated := &corev1alpha1.LogicalCluster{}
		if err := json.Unmarshal(dry.body, updated); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("decoding the applied LogicalCluster: %w", err))
		}
		if err := checkStatusChange(t.initializer, cur, updated); err != nil {
			return nil, err
		}
		if clientDryRun {
			return dry, nil
		}
		if a := req.Header.Get("Accept"); a != "" {
			hdr.Set("Accept", a)
		}
		return h.do(ctx, http.MethodPatch, statusPath(t), req.URL.RawQuery, hdr, body)
	}
}

// initializing reads the live LogicalCluster and fails with NotFound
// unless it waits for the initializer.
func (h *handler) initializing(ctx context.Context, t target) (*corev1alpha1.LogicalCluster, []byte, error) {
	cur, curJSON, err := h.getLogicalCluster(ctx, t.cluster.Name)
	if err != nil {
		return nil, nil, err
	}
	if !corev1alpha1.HasInitializer(cur.Status.Initializers, t.initializer) {
		return nil, nil, apierrors.NewNotFound(logicalClustersGR, corev1alpha1.LogicalClusterName)
	}
	return cur, curJSON, nil
}

func statusPath(t target) string {
	return t.clusterPath() + resourcePath + "/" + corev1alpha1.LogicalClusterName + "/status"
}

// checkStatusChange refuses a new LogicalCluster that does more than
// remove the initializer in from status.initializers: adding an
// initializer, removing another one, reordering them, changing the phase
// (except to Ready with the last initializer gone, which the shard does
// anyway), or any other field of the status, metadata or spec. The
// resourceVersion (a precondition), the managed fields and the label that
// marks the logical cluster as waiting for in (both maintained by the
// shard) are not compared.
func checkStatusChange(in corev1alpha1.LogicalClusterInitializer, cur, updated *corev1alpha1.LogicalCluster) error {
	had := sets.New(cur.Status.Initializers...)
	has := sets.New(updated.Status.Initializers...)
	if added := sets.List(has.Difference(had)); len(added) > 0 {
		return forbidden(fmt.Sprintf("initializer %q may only remove itself from status.initializers, it cannot add %q", in, added))
	}
	if removed := sets.List(had.Difference(has).Delete(in)); len(removed) > 0 {
		return forbidden(fmt.Sprintf("initializer %q may only remove itself from status.initializers, it cannot remove %q", in, removed))
	}
	without := slices.DeleteFunc(slices.Clone(cur.Status.Initializers), func(x corev1alpha1.LogicalClusterInitializer) bool { return x == in })
	if !slices.Equal(updated.Status.Initializers, cur.Status.Initializers) && !slices.Equal(updated.Status.Initializers, without) {
		return forbidden(fmt.Sprintf("initializer %q may only remove itself from status.initializers, it cannot reorder or repeat them: %q would become %q",
			in, cur.Status.Initializers, updated.Status.Initializers))
	}
	becomesReady := cur.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing &&
		updated.Status.Phase == corev1alpha1.LogicalClusterPhaseReady && len(updated.Status.Initializers) == 0
	if updated.Status.Phase != cur.Status.Phase && !becomesReady {
		return forbidden(fmt.Sprintf("initializer %q cannot change status.phase from %q to %q: the logical cluster becomes Ready when its last initializer is removed",
			in, cur.Status.Phase, updated.Status.Phase))
	}
	if changed := otherChanges(in, cur, updated); len(changed) > 0 {
		return forbidden(fmt.Sprintf("initializer %q may only remove itself from status.initializers, it cannot change %s",
			in, strings.Join(changed, ", ")))
	}
	return nil
}

// otherChanges names the fields that differ between cur and updated other
// than status.initializers and status.phase, the resourceVersion, the
// managed fields and the label of in.
func otherChanges(in corev1alpha1.LogicalClusterInitializer, cur, updated *corev1alpha1.LogicalCluster) []string {
	a, b := forComparison(in, cur), forComparison(in, updated)
	b.Status.Initializers, b.Status.Phase = a.Status.Initializers, a.Status.Phase
	var changed []string
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"status.URL", a.Status.URL, b.Status.URL},
		{"status.conditions", a.Status.Conditions, b.Status.Conditions},
		{"status", a.Status, b.Status},
		{"metadata.labels", a.Labels, b.Labels},
		{"metadata.annotations", a.Annotations, b.Annotations},
		{"metadata.finalizers", a.Finalizers, b.Finalizers},
		{"metadata.ownerReferences", a.OwnerReferences, b.OwnerReferences},
		{"metadata", a.ObjectMeta, b.ObjectMeta},
		{"spec", a.Spec, b.Spec},
	} {
		if apiequality.Semantic.DeepEqual(f.x, f.y) {
			continue
		}
		// The whole status or metadata differs only if none of the fields
		// named before does.
		if (f.name == "status" || f.name == "metadata") && slices.ContainsFunc(changed, func(c string) bool { return strings.HasPrefix(c, f.name+".") }) {
			continue
		}
		changed = append(changed, f.name)
	}
	return changed
}

// forComparison returns a copy of lc without what checkStatusChange does not
// compare.
func forComparison(in corev1alpha1.LogicalClusterInitializer, lc *corev1alpha1.LogicalCluster) *corev1alpha1.LogicalCluster {
	c := lc.DeepCopy()
	c.TypeMeta = metav1.TypeMeta{}
	c.ResourceVersion, c.ManagedFields = "", nil
	delete(c.Labels, corev1alpha1.InitializerLabelKey(in))
	return c
}

func forbidden(msg string) error {
	return apierrors.NewForbidden(logicalClustersGR, corev1alpha1.LogicalClusterName, errors.New(msg))
}

func unsupportedMediaType(mediaType string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format %q: accepted are application/json, application/yaml (updates), application/json-patch+json, application/merge-patch+json and application/apply-patch+yaml (patches)", mediaType),
	}}
}

// withResourceVersion sets metadata.resourceVersion of a JSON object unless
// it is set.
func withResourceVersion(obj []byte, rv string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("the object is not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("the object is null")
	}
	meta, ok := m["metadata"].(map[string]any)
	if !ok {
		if m["metadata"] != nil {
			return nil, errors.New("metadata must be an object")
		}
		meta = map[string]any{}
		m["metadata"] = meta
	}
	if s, _ := meta["resourceVersion"].(string); s != "" {
		return obj, nil
	}
	meta["resourceVersion"] = rv
	return json.Marshal(m)
}

// hasResourceVersion tells whether a JSON object sets
// metadata.resourceVersion.
func hasResourceVersion(obj []byte) bool {
	var m struct {
		Metadata struct {
			ResourceVersion *string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	return json.Unmarshal(obj, &m) == nil && m.Metadata.ResourceVersion != nil && *m.Metadata.ResourceVersion != ""
}

// touchesResourceVersion tells whether a JSON patch reads or writes
// metadata.resourceVersion (a test operation on it is a precondition too).
func touchesResourceVersion(patch jsonpatch.Patch) bool {
	for _, op := range patch {
		p, err := op.Path()
		if err != nil {
			continue
		}
		if p == "" || p == "/metadata" || p == "/metadata/resourceVersion" {
			return true
		}
	}
	return false
}

// readBody reads the request body up to the limit.
func (h *handler) readBody(req *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(req.Body, h.maxBody+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if int64(len(b)) > h.maxBody {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", h.maxBody))
	}
	return b, nil
}
