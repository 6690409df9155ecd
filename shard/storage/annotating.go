package storage

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// annotating stamps the kcp.io/cluster annotation, derived from the key, on
// everything written.
type annotating struct {
	storage.Interface
	prefix string
}

var _ storage.Interface = &annotating{}

// IsWatchListSemanticsUnSupported tells the watch cache above to initialise
// with a plain LIST: the watch-list path keys its temporary store by
// namespace/name and would merge objects of different clusters.
func (a *annotating) IsWatchListSemanticsUnSupported() bool { return true }

func (a *annotating) stamp(key string, obj runtime.Object) error {
	cluster, err := clusterFromKey(a.prefix, key)
	if err != nil {
		return err
	}
	return SetCluster(obj, cluster)
}

// SetCluster sets the kcp.io/cluster annotation on an object.
func SetCluster(obj runtime.Object, cluster logicalcluster.Name) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("cannot annotate %T with its logical cluster: %w", obj, err)
	}
	ann := m.GetAnnotations()
	if ann[logicalcluster.AnnotationKey] == string(cluster) {
		return nil
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[logicalcluster.AnnotationKey] = string(cluster)
	m.SetAnnotations(ann)
	return nil
}

func (a *annotating) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := a.stamp(key, obj); err != nil {
		return err
	}
	return a.Interface.Create(ctx, key, obj, out, ttl)
}

func (a *annotating) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	cluster, err := clusterFromKey(a.prefix, key)
	if err != nil {
		return err
	}
	stamped := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		out, ttl, err := tryUpdate(input, res)
		if err != nil || out == nil {
			return out, ttl, err
		}
		if err := SetCluster(out, cluster); err != nil {
			return nil, nil, err
		}
		return out, ttl, nil
	}
	return a.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, stamped, cachedExistingObject)
}
