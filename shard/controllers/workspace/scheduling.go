package workspace

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// clusterNameLength is the length of generated logical cluster names.
const clusterNameLength = 16

const (
	letters        = "abcdefghijklmnopqrstuvwxyz"
	lettersDigits  = letters + "0123456789"
	workspacesKind = "workspaces"
)

// newClusterName returns a random logical cluster name: 16 characters of
// [a-z0-9], the first a letter, so that it is a valid name and never looks
// like a number. 36^15*26 names make collisions negligible; they are
// handled anyway (see schedule).
func newClusterName() logicalcluster.Name {
	var b [clusterNameLength]byte
	b[0] = letters[rand.IntN(len(letters))]
	for i := 1; i < len(b); i++ {
		b[i] = lettersDigits[rand.IntN(len(lettersDigits))]
	}
	return logicalcluster.Name(b[:])
}

// isGeneratedClusterName tells whether name has the format newClusterName
// generates: clusterNameLength characters of [a-z0-9], the first a letter.
// Only such names are taken from the internal.tenancy.kcp.io/cluster
// annotation, so that the annotation can never point the controller at
// root, a system:* cluster, a path or any other name it did not choose.
func isGeneratedClusterName(name string) bool {
	if len(name) != clusterNameLength || !strings.ContainsRune(letters, rune(name[0])) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !strings.ContainsRune(lettersDigits, rune(name[i])) {
			return false
		}
	}
	return true
}

// matchingShards returns the shards whose labels match selector; a nil
// selector matches every shard.
func matchingShards(shards []*corev1alpha1.Shard, selector *metav1.LabelSelector) ([]*corev1alpha1.Shard, error) {
	sel := labels.Everything()
	if selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(selector); err != nil {
			return nil, fmt.Errorf("invalid spec.location.selector: %w", err)
		}
	}
	var out []*corev1alpha1.Shard
	for _, s := range shards {
		if sel.Matches(labels.Set(s.Labels)) {
			out = append(out, s)
		}
	}
	return out, nil
}

// chooseShard picks the shard of the logical cluster name among shards by
// rendezvous (highest random weight) hashing: every shard scores
// hash(name, shard) and the highest score wins. Every shard of the
// installation computes the same answer for a name, and removing a shard
// moves only the names that were mapped to it. It returns nil for no shards.
func chooseShard(name logicalcluster.Name, shards []*corev1alpha1.Shard) *corev1alpha1.Shard {
	var best *corev1alpha1.Shard
	var bestScore uint64
	for _, s := range shards {
		score := shardScore(name, s.Name)
		if best == nil || score > bestScore || (score == bestScore && s.Name < best.Name) {
			best, bestScore = s, score
		}
	}
	return best
}

// shardScore is the rendezvous weight of a shard for a logical cluster name.
// It must not change between releases: shards of different versions must
// agree on it.
func shardScore(name logicalcluster.Name, shard string) uint64 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(shard))
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// TypeLookup returns the WorkspaceType a reference points to. The path of
// ref is the canonical path or the name of the type's logical cluster; the
// caller resolves it. A missing type is a NotFound error.
type TypeLookup func(ref tenancyv1alpha1.WorkspaceTypeReference) (*tenancyv1alpha1.WorkspaceType, error)

// errTypeCycle reports a WorkspaceType that extends itself.
var errTypeCycle = errors.New("workspace types extend each other in a cycle")

// typeInitializers returns the initializers a workspace of type ref gets
// from its type: the type's own (when spec.initializer is set) and those of
// every type it extends, transitively, depth first, without duplicates;
// and system:apibindings when one of them has defaultAPIBindings.
// Extended types without a path are looked up in the extending type's
// logical cluster. A type reached twice contributes once; a cycle is an
// error, since admission should have refused it.
func typeInitializers(ref tenancyv1alpha1.WorkspaceTypeReference, lookup TypeLookup) ([]corev1alpha1.LogicalClusterInitializer, error) {
	var out []corev1alpha1.LogicalClusterInitializer
	done := map[string]bool{}
	onPath := map[string]bool{}
	var visit func(ref tenancyv1alpha1.WorkspaceTypeReference) error
	visit = func(ref tenancyv1alpha1.WorkspaceTypeReference) error {
		wt, err := lookup(ref)
		if err != nil {
			return fmt.Errorf("workspace type %s: %w", ref, err)
		}
		cluster := typeCluster(wt, ref)
		id := cluster + ":" + wt.Name
		if done[id] {
			return nil
		}
		if onPath[id] {
			return fmt.Errorf("%w at %s", errTypeCycle, id)
		}
		onPath[id] = true
		defer delete(onPath, id)
		if wt.Spec.Initializer {
			in := tenancyv1alpha1.InitializerFor(cluster, tenancyv1alpha1.WorkspaceTypeName(wt.Name))
			if !corev1alpha1.HasInitializer(out, in) {
				out = append(out, in)
			}
		}
		if len(wt.Spec.DefaultAPIBindings) > 0 && !corev1alpha1.HasInitializer(out, corev1alpha1.APIBindingsInitializer) {
			out = append(out, corev1alpha1.APIBindingsInitializer)
		}
		for _, ext := range wt.Spec.Extend.With {
			if ext.Path == "" {
				ext.Path = cluster
			}
			if err := visit(ext); err != nil {
				return err
			}
		}
		done[id] = true
		return nil
	}
	if err := visit(ref); err != nil {
		return nil, err
	}
	return out, nil
}

// typeCluster is the name of the logical cluster of wt: its kcp.io/cluster
// annotation, or the path it was looked up under if it has none.
func typeCluster(wt *tenancyv1alpha1.WorkspaceType, ref tenancyv1alpha1.WorkspaceTypeReference) string {
	if c := logicalcluster.From(wt); !c.Empty() {
		return c.String()
	}
	return ref.Path
}

// isTypeNotFound tells whether err means a WorkspaceType does not exist
// (yet): scheduling waits for it instead of failing.
func isTypeNotFound(err error) bool {
	return apierrors.IsNotFound(err)
}

// parentInfo is what a new logical cluster inherits from the logical
// cluster of its Workspace's parent.
type parentInfo struct {
	// path is the canonical path of the parent.
	path logicalcluster.Path
	// requiredGroups is the parent's required-groups annotation, if set.
	requiredGroups string
}

// parentInfoFrom reads parentInfo from the parent's LogicalCluster.
func parentInfoFrom(parent logicalcluster.Name, lc *corev1alpha1.LogicalCluster) parentInfo {
	info := parentInfo{path: parent.Path()}
	if lc == nil {
		return info
	}
	if p := lc.Annotations[logicalcluster.PathAnnotationKey]; p != "" {
		info.path = logicalcluster.NewPath(p)
	}
	info.requiredGroups = lc.Annotations[corev1alpha1.RequiredGroupsAnnotationKey]
	return info
}

// typeAnnotation is the value of internal.tenancy.kcp.io/type for a
// workspace of type ref: "<type path>:<type name>".
func typeAnnotation(ref tenancyv1alpha1.WorkspaceTypeReference) string {
	return ref.String()
}

// newLogicalCluster returns the LogicalCluster to create for ws, a
// Workspace in the logical cluster parent, on the shard named shard.
func newLogicalCluster(ws *tenancyv1alpha1.Workspace, parent logicalcluster.Name, info parentInfo, shard string, typeInitializers []corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
	annotations := map[string]string{
		logicalcluster.PathAnnotationKey:              info.path.Join(ws.Name).String(),
		corev1alpha1.LogicalClusterShardAnnotationKey: shard,
	}
	if ws.Spec.Type != nil {
		annotations[corev1alpha1.LogicalClusterTypeAnnotationKey] = typeAnnotation(*ws.Spec.Type)
	}
	var initializers []corev1alpha1.LogicalClusterInitializer
	if owner, ok := ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]; ok {
		annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] = owner
		initializers = append(initializers, corev1alpha1.OwnerInitializer)
	}
	if info.requiredGroups != "" {
		annotations[corev1alpha1.RequiredGroupsAnnotationKey] = info.requiredGroups
	}
	for _, in := range typeInitializers {
		if !corev1alpha1.HasInitializer(initializers, in) {
			initializers = append(initializers, in)
		}
	}
	return &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:        corev1alpha1.LogicalClusterName,
			Annotations: annotations,
		},
		Spec: corev1alpha1.LogicalClusterSpec{
			Owner: &corev1alpha1.LogicalClusterOwner{
				APIVersion: tenancyv1alpha1.SchemeGroupVersion.String(),
				Resource:   workspacesKind,
				Name:       ws.Name,
				Cluster:    parent.String(),
				UID:        ws.UID,
			},
			Initializers: initializers,
		},
	}
}

// ownedBy tells whether lc belongs to the Workspace ws.
func ownedBy(lc *corev1alpha1.LogicalCluster, ws *tenancyv1alpha1.Workspace) bool {
	o := lc.Spec.Owner
	return o != nil && o.UID == ws.UID && o.Resource == workspacesKind && o.Name == ws.Name
}

// externalURL is the address users reach a shard's logical clusters at:
// spec.externalURL, or spec.baseURL.
func externalURL(s *corev1alpha1.Shard) string {
	if s.Spec.ExternalURL != "" {
		return s.Spec.ExternalURL
	}
	return s.Spec.BaseURL
}

// workspaceURL is spec.URL of a workspace with the canonical path path on
// shard s.
func workspaceURL(s *corev1alpha1.Shard, path logicalcluster.Path) string {
	return strings.TrimRight(externalURL(s), "/") + "/clusters/" + path.String()
}
