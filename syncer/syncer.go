package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/syncer/options"
)

var (
	syncTargetsGVR = workloadv1alpha1.SchemeGroupVersion.WithResource("synctargets")
	namespacesGVR  = corev1.SchemeGroupVersion.WithResource("namespaces")
)

// Syncer syncs the workloads scheduled to one SyncTarget onto one physical
// cluster.
type Syncer struct {
	opts options.Completed

	// upstream reaches the SyncTarget's workspace; syncTargets is its
	// SyncTarget client there.
	upstream    *rest.Config
	syncTargets dynamic.ResourceInterface
	// Cluster, Name, UID and Key identify the SyncTarget.
	Cluster logicalcluster.Name
	Name    string
	UID     types.UID
	Key     string

	downstreamConfig    *rest.Config
	downstream          dynamic.Interface
	downstreamDiscovery discovery.DiscoveryInterface
	// downstreamFactory holds the downstream informers (namespaces and the
	// synced resources), all filtered by the SyncTarget's key label.
	downstreamFactory dynamicinformer.DynamicSharedInformerFactory
	namespaces        cache.SharedIndexInformer
	// created holds the locators of namespaces the syncer created that
	// the namespace informer may not have yet (namespace name to
	// NamespaceLocator).
	created sync.Map
	cleaner *reconciler.Controller

	// checked is what the syncer found about resources of the physical
	// cluster (by group/resource@versions), since checkedAt.
	checked   map[string]workloadv1alpha1.ResourceCompatibleState
	checkedAt time.Time
	// versions are the versions synced of resources (by the same key).
	versions map[string]string

	mu      sync.Mutex
	engines map[string]*engine // by engineID
}

// New connects to both sides and checks the SyncTarget.
func New(ctx context.Context, o options.Completed) (*Syncer, error) {
	up, err := loadConfig(o.FromKubeconfig, o.FromContext)
	if err != nil {
		return nil, fmt.Errorf("--from-kubeconfig: %w", err)
	}
	var down *rest.Config
	if o.ToKubeconfig == "" {
		down, err = rest.InClusterConfig()
	} else {
		down, err = loadConfig(o.ToKubeconfig, o.ToContext)
	}
	if err != nil {
		return nil, fmt.Errorf("the physical cluster's configuration (--to-kubeconfig): %w", err)
	}
	for _, cfg := range []*rest.Config{up, down} {
		cfg.QPS, cfg.Burst = o.QPS, o.Burst
		cfg.UserAgent = "tessera-syncer/" + o.SyncTargetName
	}
	upDynamic, err := dynamic.NewForConfig(up)
	if err != nil {
		return nil, err
	}
	s := &Syncer{
		opts:        o,
		upstream:    up,
		syncTargets: upDynamic.Resource(syncTargetsGVR),
		Name:        o.SyncTargetName,
		UID:         types.UID(o.SyncTargetUID),
		engines:     map[string]*engine{},
		checked:     map[string]workloadv1alpha1.ResourceCompatibleState{},
		versions:    map[string]string{},
	}
	st, err := s.syncTargets.Get(ctx, s.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading SyncTarget %q: %w", s.Name, err)
	}
	if st.GetUID() != s.UID {
		return nil, fmt.Errorf("SyncTarget %q has UID %s, not %s (--sync-target-uid): it was deleted and created again; generate the syncer's manifest again with kubectl kcp workload sync", s.Name, st.GetUID(), s.UID)
	}
	s.Cluster = logicalcluster.From(st)
	if o.FromCluster != "" && s.Cluster.String() != o.FromCluster {
		return nil, fmt.Errorf("SyncTarget %q is in logical cluster %q, not %q (--from-cluster)", s.Name, s.Cluster, o.FromCluster)
	}
	s.Key = workloadv1alpha1.ToSyncTargetKey(s.Cluster.String(), s.Name)

	s.downstreamConfig = down
	if s.downstream, err = dynamic.NewForConfig(down); err != nil {
		return nil, err
	}
	if s.downstreamDiscovery, err = discovery.NewDiscoveryClientForConfig(down); err != nil {
		return nil, err
	}
	s.downstreamFactory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.downstream, 0, metav1.NamespaceAll, s.keyLabelSelector)
	s.namespaces = s.downstreamFactory.ForResource(namespacesGVR).Informer()
	s.cleaner = reconciler.New("syncer-namespace-cleaner", reconciler.Func(s.cleanNamespace), reconciler.Options{Workers: 1})
	return s, nil
}

func loadConfig(path, context string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
}

// Run syncs until ctx is done: it heartbeats, follows the SyncTarget's
// synced resources and runs one engine per resource.
func (s *Syncer) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("syncTarget", s.Cluster.String()+"|"+s.Name, "key", s.Key)
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting the syncer")

	if err := s.cleaner.Watch(s.namespaces, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if ns, ok := obj.(*unstructured.Unstructured); ok {
				s.cleaner.EnqueueAfter(reconciler.Key{Name: ns.GetName()}, s.opts.DownstreamNamespaceCleanDelay)
			}
		},
	}); err != nil {
		return err
	}
	s.downstreamFactory.Start(ctx.Done())
	go func() { _ = s.cleaner.Run(ctx) }()
	go s.heartbeat(ctx)

	// One informer on the SyncTarget: its synced resources and virtual
	// workspace URLs decide the engines.
	changed := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.Name).String()
			return s.syncTargets.List(ctx, lo)
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.Name).String()
			return s.syncTargets.Watch(ctx, lo)
		},
	}
	stInformer := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	if _, err := stInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	}); err != nil {
		return err
	}
	go stInformer.RunWithContext(ctx)

	imported := len(s.opts.Resources) == 0
	for {
		if !imported {
			if err := s.importResources(ctx); err != nil {
				logger.Error(err, "Importing resources of the physical cluster; trying again in a minute")
			} else {
				imported = true
			}
		}
		select {
		case <-ctx.Done():
			s.stopEngines(nil)
			return nil
		case <-changed:
		case <-time.After(time.Minute):
			// Also look again now and then: a failed check is retried.
		}
		obj, exists, err := stInformer.GetStore().GetByKey(s.Name)
		if err != nil || !exists {
			continue
		}
		st, err := toSyncTarget(obj)
		if err != nil {
			logger.Error(err, "Reading the SyncTarget")
			continue
		}
		if st.UID != s.UID {
			return fmt.Errorf("SyncTarget %q now has UID %s, not %s: it was deleted and created again", s.Name, st.UID, s.UID)
		}
		if err := s.reportCompatibility(ctx, st); err != nil {
			logger.Error(err, "Reporting which resources the physical cluster serves")
		}
		s.reconcileEngines(ctx, st)
	}
}

func toSyncTarget(obj any) (*workloadv1alpha1.SyncTarget, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", obj)
	}
	st := &workloadv1alpha1.SyncTarget{}
	return st, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, st)
}

// heartbeat sets status.lastSyncerHeartbeatTime every interval, and at
// once; a failed heartbeat is retried every second. The patch carries the
// SyncTarget's UID, so that it fails on a SyncTarget created again.
func (s *Syncer) heartbeat(ctx context.Context) {
	logger := klog.FromContext(ctx)
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"lastSyncerHeartbeatTime":%q}}`, s.UID, time.Now().UTC().Format(time.RFC3339))
			if _, err := s.syncTargets.Patch(ctx, s.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
				logger.Error(err, "Setting the SyncTarget's heartbeat")
				return false, nil
			}
			return true, nil
		})
	}, s.opts.HeartbeatInterval)
}

// reportCompatibility sets the state of each synced resource: Accepted
// when the physical cluster serves one of its versions and the syncer can
// list it there (discovery alone can promise what a list then refuses,
// e.g. for want of RBAC), Incompatible otherwise. Only the syncer can tell;
// the shard lists the resources (from spec.supportedAPIExports) as
// Pending. A resource is compared once, and again every
// compatibilityRecheck; the SyncTarget's other changes (heartbeats) cost
// nothing.
func (s *Syncer) reportCompatibility(ctx context.Context, st *workloadv1alpha1.SyncTarget) error {
	if time.Since(s.checkedAt) > compatibilityRecheck {
		s.checked, s.checkedAt = map[string]workloadv1alpha1.ResourceCompatibleState{}, time.Now()
		s.versions = map[string]string{}
	}
	key := func(r workloadv1alpha1.ResourceToSync) string {
		return r.Group + "/" + r.Resource + "@" + strings.Join(r.Versions, ",")
	}
	var served map[schema.GroupResource][]string
	changed := false
	for i := range st.Status.SyncedResources {
		r := &st.Status.SyncedResources[i]
		state, ok := s.checked[key(*r)]
		if !ok {
			if served == nil {
				var err error
				if served, err = s.servedResources(); err != nil {
					return err
				}
			}
			state = s.compatibility(ctx, *r, served)
			s.checked[key(*r)] = state
		}
		if r.State != state {
			r.State, changed = state, true
		}
	}
	if !changed {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return err
	}
	_, err = s.syncTargets.UpdateStatus(ctx, &unstructured.Unstructured{Object: u}, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return nil // the newer SyncTarget comes as an event
	}
	return err
}

// compatibilityRecheck is how long the syncer trusts what it found about
// a resource of the physical cluster.
const compatibilityRecheck = 10 * time.Minute

// servedResources reads the physical cluster's discovery: the versions
// served of each resource.
func (s *Syncer) servedResources() (map[schema.GroupResource][]string, error) {
	served := map[schema.GroupResource][]string{}
	_, lists, err := s.downstreamDiscovery.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
				served[gr] = append(served[gr], gv.Version)
			}
		}
	}
	return served, nil
}

// compatibility is Accepted when the physical cluster serves one of r's
// versions and a list of it there succeeds.
func (s *Syncer) compatibility(ctx context.Context, r workloadv1alpha1.ResourceToSync, served map[schema.GroupResource][]string) workloadv1alpha1.ResourceCompatibleState {
	for _, v := range r.Versions {
		if !slices.Contains(served[schema.GroupResource{Group: r.Group, Resource: r.Resource}], v) {
			continue
		}
		gvr := schema.GroupVersionResource{Group: r.Group, Version: v, Resource: r.Resource}
		if _, err := s.downstream.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			klog.FromContext(ctx).Info("The physical cluster advertises a resource the syncer cannot list", "resource", gvr, "err", err)
			continue
		}
		return workloadv1alpha1.ResourceSchemaAcceptedState
	}
	return workloadv1alpha1.ResourceSchemaIncompatibleState
}

// reconcileEngines runs one engine per Accepted resource and syncer URL
// set, and stops the others.
func (s *Syncer) reconcileEngines(ctx context.Context, st *workloadv1alpha1.SyncTarget) {
	var urls, upURLs []string
	for _, vw := range st.Status.VirtualWorkspaces {
		if vw.SyncerURL != "" {
			urls = append(urls, vw.SyncerURL)
		}
		if vw.UpsyncerURL != "" {
			upURLs = append(upURLs, vw.UpsyncerURL)
		}
	}
	slices.Sort(urls)
	slices.Sort(upURLs)
	want := map[string]resourceToSync{}
	for _, r := range st.Status.SyncedResources {
		if r.State != workloadv1alpha1.ResourceSchemaAcceptedState || len(r.Versions) == 0 {
			continue
		}
		gvr := schema.GroupVersionResource{Group: r.Group, Version: s.downstreamVersion(r), Resource: r.Resource}
		rs := resourceToSync{gvr: gvr, urls: urls}
		if len(rs.urls) > 0 {
			want[rs.id()] = rs
		}
		// Volumes go up from where they are provisioned, and down once the
		// volume coordination switched them to Sync.
		if up := (resourceToSync{gvr: gvr, urls: upURLs, upsync: true}); isUpsynced(r) && len(up.urls) > 0 {
			want[up.id()] = up
		}
	}
	s.stopEngines(want)
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, rs := range want {
		if _, ok := s.engines[id]; ok {
			continue
		}
		e, err := s.newEngine(rs)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Starting to sync", "resource", rs.gvr)
			continue
		}
		s.engines[id] = e
		e.start(ctx)
	}
}

// downstreamVersion is the version of r synced: the first of its versions
// the physical cluster serves.
func (s *Syncer) downstreamVersion(r workloadv1alpha1.ResourceToSync) string {
	key := r.Group + "/" + r.Resource + "@" + strings.Join(r.Versions, ",")
	if v, ok := s.versions[key]; ok {
		return v
	}
	v := s.findDownstreamVersion(r)
	s.versions[key] = v
	return v
}

func (s *Syncer) findDownstreamVersion(r workloadv1alpha1.ResourceToSync) string {
	gv := schema.GroupVersion{Group: r.Group}
	for _, v := range r.Versions {
		gv.Version = v
		if l, err := s.downstreamDiscovery.ServerResourcesForGroupVersion(gv.String()); err == nil {
			for _, ar := range l.APIResources {
				if ar.Name == r.Resource {
					return v
				}
			}
		}
	}
	return r.Versions[0]
}

// stopEngines stops the engines whose id is not in keep (all for nil).
func (s *Syncer) stopEngines(keep map[string]resourceToSync) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.engines {
		if _, ok := keep[id]; !ok {
			e.stop()
			delete(s.engines, id)
		}
	}
}

// runningEngines returns the engines that run now.
func (s *Syncer) runningEngines() []*engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	engines := make([]*engine, 0, len(s.engines))
	for _, e := range s.engines {
		engines = append(engines, e)
	}
	return engines
}

// downstreamObjectsIn tells whether a running engine has a downstream
// object in namespace. Without running engines whose caches are filled
// (the syncer just started, or its resources are changing) it cannot
// tell, and says so.
func (s *Syncer) downstreamObjectsIn(namespace string) (busy, known bool, err error) {
	engines := s.runningEngines()
	if len(engines) == 0 {
		return false, false, nil
	}
	for _, e := range engines {
		if !e.downstream.HasSynced() {
			return false, false, nil
		}
		objs, err := e.downstream.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			return false, false, err
		}
		if len(objs) > 0 {
			return true, true, nil
		}
	}
	return false, true, nil
}

// cleanNamespace deletes a downstream namespace of the SyncTarget that
// holds no synced object any more (after the clean delay).
func (s *Syncer) cleanNamespace(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	obj, exists, err := s.namespaces.GetStore().GetByKey(key.Name)
	if err != nil || !exists {
		return reconciler.Result{}, err
	}
	ns := obj.(*unstructured.Unstructured)
	if ns.GetDeletionTimestamp() != nil {
		return reconciler.Result{}, nil
	}
	busy, known, err := s.downstreamObjectsIn(key.Name)
	if err != nil || busy {
		return reconciler.Result{}, err
	}
	if !known {
		return reconciler.Result{RequeueAfter: s.opts.DownstreamNamespaceCleanDelay + time.Second}, nil
	}
	uid := ns.GetUID()
	err = s.downstream.Resource(namespacesGVR).Delete(ctx, key.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Deleted an empty downstream namespace", "namespace", key.Name)
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return reconciler.Result{}, nil
	}
	return reconciler.Result{}, err
}

// planCleaning looks at a downstream namespace after the clean delay.
func (s *Syncer) planCleaning(namespace string) {
	s.cleaner.EnqueueAfter(reconciler.Key{Name: namespace}, s.opts.DownstreamNamespaceCleanDelay)
}

// keyLabelSelector limits downstream lists and watches to the objects of
// the SyncTarget.
func (s *Syncer) keyLabelSelector(lo *metav1.ListOptions) {
	lo.LabelSelector = workloadv1alpha1.InternalDownstreamClusterLabel + "=" + s.Key
}
