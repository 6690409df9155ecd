package syncer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// A volume the syncer upsyncs names its workspace's claim in
// spec.claimRef. As in one cluster, where the volume controller binds both
// ways, the upsyncer then sets the claim's spec.volumeName, so that the
// pair looks bound in the workspace (kcp's storage design: "PVC and PV
// would appear bound"): once, when the claim has none, and only for a
// claim the SyncTarget syncs. A failure is logged; the next write of the
// volume (its status follows the physical cluster's) tries again.

var persistentVolumes = schema.GroupResource{Resource: "persistentvolumes"}

// bindClaim binds the claim of a volume written through the upsyncer
// (obj, nil when the write failed).
func (h *handler) bindClaim(ctx context.Context, t target, st *workloadv1alpha1.SyncTarget, r routed, key string, obj map[string]any) {
	if obj == nil || h.state != workloadv1alpha1.ResourceStateUpsync || r.resource != persistentVolumes || t.cluster.Wildcard {
		return
	}
	var pv struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			ClaimRef *struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"claimRef"`
		} `json:"spec"`
	}
	if b, err := json.Marshal(obj); err != nil || json.Unmarshal(b, &pv) != nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name == "" || pv.Spec.ClaimRef.Namespace == "" {
		return
	}
	synced, identity := syncedResource(st, schema.GroupResource{Resource: "persistentvolumeclaims"}, "v1")
	if !synced {
		return
	}
	resource := "persistentvolumeclaims"
	if identity != "" {
		resource += ":" + identity
	}
	path := "/clusters/" + t.cluster.Name.String() + "/api/v1/namespaces/" + url.PathEscape(pv.Spec.ClaimRef.Namespace) + "/" + resource + "/" + url.PathEscape(pv.Spec.ClaimRef.Name)
	logger := klog.FromContext(ctx).WithValues("cluster", t.cluster.Name, "claim", pv.Spec.ClaimRef.Namespace+"/"+pv.Spec.ClaimRef.Name, "volume", pv.Metadata.Name)
	if err := h.setVolumeName(ctx, t.cluster.Name, path, pv.Metadata.Name, key); err != nil {
		logger.Info("Could not bind the upsynced volume's claim; the volume's next write tries again", "err", err)
	}
}

// setVolumeName sets spec.volumeName of the claim at path, if it is empty
// and the claim is in Sync state for the SyncTarget of key.
func (h *handler) setVolumeName(ctx context.Context, cluster logicalcluster.Name, path, volume, key string) error {
	resp, err := h.shardGet(ctx, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading the claim: the shard answered %d", resp.StatusCode)
	}
	var claim struct {
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Labels          map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			VolumeName string `json:"volumeName"`
		} `json:"spec"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBodyBytes)).Decode(&claim); err != nil {
		return err
	}
	if claim.Spec.VolumeName != "" || claim.Metadata.Labels[workloadv1alpha1.ClusterResourceStateLabelPrefix+key] != string(workloadv1alpha1.ResourceStateSync) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": claim.Metadata.ResourceVersion},
		"spec":     map[string]any{"volumeName": volume},
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, h.base+path, bytes.NewReader(patch))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	req.Header.Set("Accept", "application/json")
	out, err := h.transport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer out.Body.Close()
	if out.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(out.Body, 4096))
		return fmt.Errorf("binding the claim in %s: the shard answered %d: %s", cluster, out.StatusCode, body)
	}
	return nil
}
