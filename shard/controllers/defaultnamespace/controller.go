package defaultnamespace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// Controller is the default namespace controller.
type Controller struct {
	*reconciler.Controller
	logicalClusters informers.Informer[*corev1alpha1.LogicalCluster]
	namespaces      informers.Informer[*corev1.Namespace]
	kube            *clusters.ClusterClientset
}

// New wires the controller to the shard's informers: LogicalClusters and
// Namespaces.
func New(kube *clusters.ClusterClientset, f *informers.SharedInformerFactory) (*Controller, error) {
	c := &Controller{
		logicalClusters: f.LogicalClusters(),
		namespaces:      f.Namespaces(),
		kube:            kube,
	}
	c.Controller = reconciler.New("defaultnamespace", reconciler.Func(func(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
		return reconcile(ctx, key.Cluster, c.state, c.create)
	}), reconciler.Options{Workers: 2})
	byCluster := func(obj any) []reconciler.Key {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return nil
		}
		return []reconciler.Key{{Cluster: logicalcluster.From(m)}}
	}
	if err := c.Watch(c.logicalClusters.Informer(), reconciler.EnqueueMappedHandler(c.Controller, byCluster)); err != nil {
		return nil, err
	}
	onlyDefault := cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			ns, ok := obj.(*corev1.Namespace)
			return ok && ns.Name == Name
		},
		Handler: reconciler.EnqueueMappedHandler(c.Controller, byCluster),
	}
	if err := c.Watch(c.namespaces.Informer(), onlyDefault); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) state(cluster logicalcluster.Name) (state, error) {
	var st state
	lc, err := c.logicalClusters.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
	switch {
	case apierrors.IsNotFound(err):
		return st, nil
	case err != nil:
		return st, err
	}
	st.ready = lc.Status.Phase == corev1alpha1.LogicalClusterPhaseReady && lc.DeletionTimestamp == nil
	_, err = c.namespaces.Lister().Cluster(cluster).Get(Name)
	switch {
	case err == nil:
		st.exists = true
	case !apierrors.IsNotFound(err):
		return st, err
	}
	return st, nil
}

func (c *Controller) create(ctx context.Context, cluster logicalcluster.Name) error {
	client, err := c.kube.For(cluster)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in %s: %w", Name, cluster, err)
	}
	return err
}
