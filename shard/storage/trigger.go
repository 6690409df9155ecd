package storage

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ClusterField is a field of every object, its logical cluster, that the
// storage layers add for the watch cache: watchers of one cluster are
// indexed by it, so an event is offered to the watchers of its own cluster
// (and to those across all clusters), not to every watcher of the
// resource. Clients cannot select on it: field selectors are checked
// against the registry's fields before they reach storage.
const ClusterField = "kcp.io/cluster"

// clusterTrigger is the watch cache's trigger: the cluster of an object.
var clusterTrigger = storage.IndexerFuncs{ClusterField: func(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return string(logicalcluster.From(m))
}}

// withClusterField returns attrs with ClusterField added to the fields.
func withClusterField(attrs storage.AttrFunc) storage.AttrFunc {
	if attrs == nil {
		attrs = storage.DefaultNamespaceScopedAttr
	}
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		l, f, err := attrs(obj)
		if err != nil {
			return l, f, err
		}
		out := make(fields.Set, len(f)+1)
		for k, v := range f {
			out[k] = v
		}
		out[ClusterField] = clusterTrigger[ClusterField](obj)
		return l, out, nil
	}
}

// clusterWatchPredicate narrows a watch of one logical cluster to it by
// ClusterField, so the watch cache indexes the watcher under its cluster.
// The key prefix already limits the watch to the cluster; this only
// changes which events the watch cache offers it.
func clusterWatchPredicate(ctx context.Context, p storage.SelectionPredicate) storage.SelectionPredicate {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard {
		return p
	}
	field := fields.OneTermEqualSelector(ClusterField, string(c.Name))
	if p.Field == nil || p.Field.Empty() {
		p.Field = field
	} else {
		p.Field = fields.AndSelectors(p.Field, field)
	}
	if p.Label == nil {
		p.Label = labels.Everything()
	}
	p.IndexFields = []string{ClusterField}
	p.GetAttrs = withClusterField(p.GetAttrs)
	return p
}
