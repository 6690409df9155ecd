package syncer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Labels and annotations of downstream objects.
const (
	// NamespaceLocatorAnnotation on a downstream namespace names its
	// upstream namespace (kcp's).
	NamespaceLocatorAnnotation = "kcp.io/namespace-locator"
	// TenantIDLabel on a downstream namespace groups the namespaces of one
	// workspace on one SyncTarget (kcp's).
	TenantIDLabel = "kcp.io/tenant-id"
	// AppliedAnnotation on a downstream object is a hash of what the
	// syncer last applied, so that an unchanged upstream object costs no
	// request.
	AppliedAnnotation = "syncer.tessera.dev/applied"
	// FieldManager is the syncer's field manager downstream.
	FieldManager = "tessera-syncer"
	// SyncerFinalizerPrefix + <key> is the finalizer the syncer puts on an
	// upstream object while a downstream copy exists (kcp's).
	SyncerFinalizerPrefix = "workload.kcp.io/syncer-"
)

// NamespaceLocator names an upstream namespace of a SyncTarget; its JSON is
// the downstream namespace's kcp.io/namespace-locator annotation, and its
// hash the downstream namespace's name. The JSON is kcp's, so that a
// namespace is named alike by kcp's syncer and Tessera's.
type NamespaceLocator struct {
	SyncTarget SyncTargetLocator `json:"syncTarget"`
	Cluster    string            `json:"cluster,omitempty"`
	Namespace  string            `json:"namespace"`
}

// SyncTargetLocator names a SyncTarget.
type SyncTargetLocator struct {
	Cluster string    `json:"cluster,omitempty"`
	Name    string    `json:"name"`
	UID     types.UID `json:"uid"`
}

// DownstreamNamespace is the name of the physical cluster's namespace of
// l: "kcp-" and the first 12 base-36 digits of the SHA-224 of l's JSON, as
// kcp names it.
func DownstreamNamespace(l NamespaceLocator) string {
	b, _ := json.Marshal(l)
	sum := sha256.Sum224(b)
	return "kcp-" + base36(sum[:])[:12]
}

// TenantID is the tenant label of the downstream namespaces of l's
// workspace: base 62 of the SHA-224 of l's JSON without the namespace.
func TenantID(l NamespaceLocator) string {
	l.Namespace = ""
	b, _ := json.Marshal(l)
	sum := sha256.Sum224(b)
	return new(big.Int).SetBytes(sum[:]).Text(62)
}

// base36 encodes b as a big-endian number in lowercase base 36, with one
// leading "0" per leading zero byte.
func base36(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	s := new(big.Int).SetBytes(b).Text(36)
	if len(b) == zeros {
		s = ""
	}
	return strings.Repeat("0", zeros) + s
}

// LocatorOf parses the locator annotation of a downstream namespace.
func LocatorOf(annotations map[string]string) (NamespaceLocator, bool) {
	var l NamespaceLocator
	v, ok := annotations[NamespaceLocatorAnnotation]
	if !ok || json.Unmarshal([]byte(v), &l) != nil {
		return NamespaceLocator{}, false
	}
	return l, true
}

// downstreamName is the name of an object downstream: kube-root-ca.crt,
// which every namespace of the physical cluster has, is kcp-root-ca.crt.
func downstreamName(resource, name string) string {
	if resource == "configmaps" && name == "kube-root-ca.crt" {
		return "kcp-root-ca.crt"
	}
	return name
}

// upstreamName inverts downstreamName.
func upstreamName(resource, name string) string {
	if resource == "configmaps" && name == "kcp-root-ca.crt" {
		return "kube-root-ca.crt"
	}
	return name
}

// skipped tells objects that are never synced: service account token
// Secrets belong to the workspace's service accounts, which the physical
// cluster does not have.
func skipped(u *unstructured.Unstructured) bool {
	return u.GetKind() == "Secret" && u.GetAPIVersion() == "v1" && fmt.Sprint(u.Object["type"]) == string(corev1.SecretTypeServiceAccountToken)
}

// upstreamOnlyAnnotationPrefixes are annotations of the placement machinery
// that stay upstream.
var upstreamOnlyAnnotationPrefixes = []string{
	workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix,
	workloadv1alpha1.ClusterFinalizerAnnotationPrefix,
	workloadv1alpha1.InternalClusterStatusAnnotationPrefix,
	workloadv1alpha1.ClusterSpecDiffAnnotationPrefix,
	workloadv1alpha1.VolumeAnnotationPrefix,
	logicalcluster.AnnotationKey,
}

// desiredDownstream returns what the syncer applies downstream for the
// upstream object up, in namespace ns: the object without its status,
// identity, owners, finalizers and the placement machinery's labels and
// annotations, labelled with the SyncTarget's key, with the hash of
// itself in AppliedAnnotation.
func desiredDownstream(up *unstructured.Unstructured, resource, ns, key string) (*unstructured.Unstructured, error) {
	return withAppliedHash(downstreamBody(up, resource, ns, key))
}

// downstreamBody is desiredDownstream without the hash.
func downstreamBody(up *unstructured.Unstructured, resource, ns, key string) *unstructured.Unstructured {
	d := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range up.Object {
		if k != "metadata" && k != "status" {
			d.Object[k] = v
		}
	}
	d.Object = runtimeDeepCopy(d.Object)
	d.SetName(downstreamName(resource, up.GetName()))
	d.SetNamespace(ns)
	labels := map[string]string{}
	for k, v := range up.GetLabels() {
		if !strings.HasPrefix(k, workloadv1alpha1.ClusterResourceStateLabelPrefix) {
			labels[k] = v
		}
	}
	labels[workloadv1alpha1.InternalDownstreamClusterLabel] = key
	d.SetLabels(labels)
	annotations := map[string]string{}
	for k, v := range up.GetAnnotations() {
		keep := true
		for _, p := range upstreamOnlyAnnotationPrefixes {
			if strings.HasPrefix(k, p) {
				keep = false
			}
		}
		if keep {
			annotations[k] = v
		}
	}
	if resource == "services" {
		// A cluster IP of the workspace means nothing in the physical
		// cluster, which allocates its own (headless stays headless).
		if ip, _, _ := unstructured.NestedString(d.Object, "spec", "clusterIP"); ip != "None" {
			unstructured.RemoveNestedField(d.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(d.Object, "spec", "clusterIPs")
		}
	}
	d.SetAnnotations(annotations)
	return d
}

// withAppliedHash puts the hash of d in its AppliedAnnotation.
func withAppliedHash(d *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	annotations := d.GetAnnotations()
	delete(annotations, AppliedAnnotation)
	d.SetAnnotations(annotations)
	b, err := json.Marshal(d.Object)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedAnnotation] = hex.EncodeToString(sum[:12])
	d.SetAnnotations(annotations)
	return d, nil
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}
