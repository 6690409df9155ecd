package compute

import (
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// syncedResources returns what st's syncer is to sync, as kcp's
// synctargetexports controller computes it: the built-in ConfigMaps and
// Secrets, then every resource of the APIExports in
// spec.supportedAPIExports (an empty path is st's own workspace) with the
// served versions of its schema and the export's identity. A resource keeps
// the state its syncer reported while its group, resource and identity
// stay the same; a new one is Pending until the syncer has compared it with
// its physical cluster. Exports or schemas not found are left out (and come
// in when they appear, through the exports' events).
func (c *Controller) syncedResources(cluster logicalcluster.Name, st *workloadv1alpha1.SyncTarget) []workloadv1alpha1.ResourceToSync {
	var out []workloadv1alpha1.ResourceToSync
	seen := map[apisv1alpha1.GroupResource]bool{}
	for _, gvr := range builtinSynced {
		gr := apisv1alpha1.GroupResource{Group: gvr.Group, Resource: gvr.Resource}
		out = append(out, workloadv1alpha1.ResourceToSync{GroupResource: gr, Versions: []string{gvr.Version}})
		seen[gr] = true
	}
	for _, ref := range st.Spec.SupportedAPIExports {
		path := logicalcluster.NewPath(ref.Path)
		if ref.Path == "" {
			path = cluster.Path()
		}
		exportCluster, ok := c.cfg.ResolvePath(path)
		if !ok {
			continue
		}
		export, err := c.cfg.Exports.Lister().Cluster(exportCluster).Get(ref.Export)
		if err != nil || export.Status.IdentityHash == "" {
			continue
		}
		for _, name := range export.Spec.LatestResourceSchemas {
			sch, err := c.cfg.Schemas.Lister().Cluster(exportCluster).Get(name)
			if apierrors.IsNotFound(err) || err != nil {
				continue
			}
			gr := apisv1alpha1.GroupResource{Group: sch.Spec.Group, Resource: sch.Spec.Names.Plural}
			if seen[gr] {
				continue
			}
			seen[gr] = true
			r := workloadv1alpha1.ResourceToSync{GroupResource: gr, Versions: []string{}, IdentityHash: export.Status.IdentityHash}
			for _, v := range sch.Spec.Versions {
				if v.Served {
					r.Versions = append(r.Versions, v.Name)
				}
			}
			slices.Sort(r.Versions)
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b workloadv1alpha1.ResourceToSync) int {
		if n := strings.Compare(a.Group, b.Group); n != 0 {
			return n
		}
		return strings.Compare(a.Resource, b.Resource)
	})
	for i := range out {
		for _, existing := range st.Status.SyncedResources {
			if existing.GroupResource == out[i].GroupResource && existing.IdentityHash == out[i].IdentityHash && slices.Equal(existing.Versions, out[i].Versions) {
				out[i].State = existing.State
				break
			}
		}
	}
	return out
}

// syncTargetsSupporting maps an APIExport or schema event to the
// SyncTargets of the shard whose supportedAPIExports name its export.
func (c *Controller) syncTargetsSupporting(obj any) []reconciler.Key {
	cluster, ok := clusterOf(obj)
	if !ok {
		return nil
	}
	exportName := ""
	switch o := obj.(type) {
	case *apisv1alpha1.APIExport:
		exportName = o.Name
	case *apisv1alpha1.APIResourceSchema:
		exportName = "" // any export of the cluster may list it
	default:
		return nil
	}
	path := c.cfg.PathOf(cluster)
	var keys []reconciler.Key
	for _, obj := range c.localSyncTargets.Informer().GetStore().List() {
		st, err := toSyncTarget(obj)
		if err != nil {
			continue
		}
		stCluster, _ := clusterOf(obj)
		for _, ref := range st.Spec.SupportedAPIExports {
			if exportName != "" && ref.Export != exportName {
				continue
			}
			if ref.Path == cluster.String() || (path != "" && ref.Path == path) || (ref.Path == "" && stCluster == cluster) {
				keys = append(keys, reconciler.Key{Cluster: stCluster, Name: st.Name})
				break
			}
		}
	}
	return keys
}
