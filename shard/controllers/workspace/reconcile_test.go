package workspace

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// fakeWorkspaces stores Workspaces like the registry does: updates keep
// the status, status updates keep everything else, resourceVersions are
// checked, and objects with finalizers are only marked deleted.
type fakeWorkspaces struct {
	mu    sync.Mutex
	rv    int
	objs  map[reconciler.Key]*tenancyv1alpha1.Workspace
	stale map[reconciler.Key]*tenancyv1alpha1.Workspace // what the "informer" returns, if set
	// lag makes the "informer" show the version before the last write.
	lag  bool
	prev map[reconciler.Key]*tenancyv1alpha1.Workspace
	// conflicts is the number of writes to fail with a conflict first.
	conflicts int
	writes    int
	// conflicted counts the writes refused with a conflict, gets the
	// reads from the server.
	conflicted, gets int
}

func newFakeWorkspaces(wss ...*tenancyv1alpha1.Workspace) *fakeWorkspaces {
	f := &fakeWorkspaces{objs: map[reconciler.Key]*tenancyv1alpha1.Workspace{}, stale: map[reconciler.Key]*tenancyv1alpha1.Workspace{},
		prev: map[reconciler.Key]*tenancyv1alpha1.Workspace{}}
	for _, ws := range wss {
		f.rv++
		ws = ws.DeepCopy()
		ws.ResourceVersion = strconv.Itoa(f.rv)
		f.objs[reconciler.Key{Cluster: logicalcluster.From(ws), Name: ws.Name}] = ws
	}
	return f
}

func (f *fakeWorkspaces) cached(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := reconciler.Key{Cluster: cluster, Name: name}
	if ws, ok := f.stale[key]; ok {
		return ws, nil
	}
	if ws, ok := f.prev[key]; ok && f.lag {
		return ws.DeepCopy(), nil
	}
	ws, ok := f.objs[key]
	if !ok {
		return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), name)
	}
	return ws.DeepCopy(), nil
}

func (f *fakeWorkspaces) get(t *testing.T, cluster logicalcluster.Name, name string) *tenancyv1alpha1.Workspace {
	t.Helper()
	ws, err := f.Get(context.Background(), cluster, name)
	if err != nil {
		t.Fatalf("getting workspace: %v", err)
	}
	return ws
}

func (f *fakeWorkspaces) Get(_ context.Context, cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	ws, ok := f.objs[reconciler.Key{Cluster: cluster, Name: name}]
	if !ok {
		return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), name)
	}
	return ws.DeepCopy(), nil
}

func (f *fakeWorkspaces) write(cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace, status bool) (*tenancyv1alpha1.Workspace, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := reconciler.Key{Cluster: cluster, Name: ws.Name}
	old, ok := f.objs[key]
	if !ok {
		return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), ws.Name)
	}
	if f.conflicts > 0 || ws.ResourceVersion != old.ResourceVersion {
		f.conflicted++
		if f.conflicts > 0 {
			f.conflicts--
			// Someone else wrote meanwhile.
			f.rv++
			old.ResourceVersion = strconv.Itoa(f.rv)
		}
		return nil, apierrors.NewConflict(tenancyv1alpha1.Resource("workspaces"), ws.Name, errors.New("the object has been modified"))
	}
	next := ws.DeepCopy()
	if status {
		next.ObjectMeta, next.Spec = *old.ObjectMeta.DeepCopy(), *old.Spec.DeepCopy()
	} else {
		next.Status = *old.Status.DeepCopy()
	}
	f.rv++
	f.writes++
	next.ResourceVersion = strconv.Itoa(f.rv)
	delete(f.stale, key)
	f.prev[key] = old.DeepCopy()
	if next.DeletionTimestamp != nil && len(next.Finalizers) == 0 {
		delete(f.objs, key)
		return next.DeepCopy(), nil
	}
	f.objs[key] = next
	return next.DeepCopy(), nil
}

func (f *fakeWorkspaces) Update(_ context.Context, cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
	return f.write(cluster, ws, false)
}

func (f *fakeWorkspaces) UpdateStatus(_ context.Context, cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
	return f.write(cluster, ws, true)
}

func (f *fakeWorkspaces) Delete(_ context.Context, cluster logicalcluster.Name, name string, uid types.UID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := reconciler.Key{Cluster: cluster, Name: name}
	ws, ok := f.objs[key]
	if !ok {
		return apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), name)
	}
	if ws.UID != uid {
		return apierrors.NewConflict(tenancyv1alpha1.Resource("workspaces"), name, errors.New("UID precondition failed"))
	}
	if len(ws.Finalizers) == 0 {
		delete(f.objs, key)
		return nil
	}
	if ws.DeletionTimestamp == nil {
		now := metav1.Now()
		ws.DeletionTimestamp = &now
		f.rv++
		ws.ResourceVersion = strconv.Itoa(f.rv)
	}
	return nil
}

// fakeShards holds the LogicalClusters of every shard, like the
// LogicalCluster registry: created in phase Initializing with the spec's
// initializers (Ready without).
type fakeShards struct {
	mu   sync.Mutex
	uid  int
	rv   int // the etcd revision, one for all shards
	lcs  map[string]map[logicalcluster.Name]*corev1alpha1.LogicalCluster
	down map[string]bool
	// keepDeleted keeps deleted LogicalClusters around with a
	// deletionTimestamp, as their content deletion would.
	keepDeleted bool
	// getErr, if set, is what every Get returns.
	getErr  error
	creates int
	gets    int
}

func newFakeShards() *fakeShards {
	return &fakeShards{lcs: map[string]map[logicalcluster.Name]*corev1alpha1.LogicalCluster{}, down: map[string]bool{}}
}

var errConnectionRefused = errors.New("dial tcp: connection refused")

func (f *fakeShards) put(shard string, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lcs[shard] == nil {
		f.lcs[shard] = map[logicalcluster.Name]*corev1alpha1.LogicalCluster{}
	}
	f.uid++
	f.rv++
	lc = lc.DeepCopy()
	lc.UID = types.UID(fmt.Sprintf("lc-uid-%d", f.uid))
	lc.ResourceVersion = strconv.Itoa(f.rv)
	lc.Annotations = withAnnotation(lc.Annotations, logicalcluster.AnnotationKey, cluster.String())
	f.lcs[shard][cluster] = lc
}

func (f *fakeShards) lookup(shard string, cluster logicalcluster.Name) *corev1alpha1.LogicalCluster {
	f.mu.Lock()
	defer f.mu.Unlock()
	if lc, ok := f.lcs[shard][cluster]; ok {
		return lc.DeepCopy()
	}
	return nil
}

func (f *fakeShards) setStatus(shard string, cluster logicalcluster.Name, phase corev1alpha1.LogicalClusterPhaseType, initializers ...corev1alpha1.LogicalClusterInitializer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lc := f.lcs[shard][cluster]
	lc.Status.Phase, lc.Status.Initializers = phase, initializers
	f.rv++
	lc.ResourceVersion = strconv.Itoa(f.rv)
}

func (f *fakeShards) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, lcs := range f.lcs {
		n += len(lcs)
	}
	return n
}

func (f *fakeShards) Create(_ context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) (*corev1alpha1.LogicalCluster, error) {
	if f.isDown(shard.Name) {
		return nil, errConnectionRefused
	}
	if f.lookup(shard.Name, cluster) != nil {
		return nil, apierrors.NewAlreadyExists(corev1alpha1.Resource("logicalclusters"), lc.Name)
	}
	lc = lc.DeepCopy()
	lc.Status.Initializers = lc.Spec.Initializers
	lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	if len(lc.Status.Initializers) > 0 {
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
	}
	f.put(shard.Name, cluster, lc)
	f.mu.Lock()
	f.creates++
	f.mu.Unlock()
	return f.lookup(shard.Name, cluster), nil
}

func (f *fakeShards) Get(_ context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
	if f.isDown(shard.Name) {
		return nil, errConnectionRefused
	}
	f.mu.Lock()
	f.gets++
	getErr := f.getErr
	f.mu.Unlock()
	if getErr != nil {
		return nil, getErr
	}
	lc := f.lookup(shard.Name, cluster)
	if lc == nil {
		return nil, apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), corev1alpha1.LogicalClusterName)
	}
	return lc, nil
}

func (f *fakeShards) Delete(_ context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name, uid types.UID) error {
	if f.isDown(shard.Name) {
		return errConnectionRefused
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	lc, ok := f.lcs[shard.Name][cluster]
	switch {
	case !ok:
		return apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), corev1alpha1.LogicalClusterName)
	case lc.UID != uid:
		return apierrors.NewConflict(corev1alpha1.Resource("logicalclusters"), lc.Name, errors.New("UID precondition failed"))
	case f.keepDeleted:
		now := metav1.Now()
		lc.DeletionTimestamp = &now
		f.rv++
		lc.ResourceVersion = strconv.Itoa(f.rv)
	default:
		delete(f.lcs[shard.Name], cluster)
	}
	return nil
}

func (f *fakeShards) isDown(shard string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down[shard]
}

func withAnnotation(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	out[k] = v
	return out
}

// env is a workspaceReconciler over fakes: shards root, s1 (region us) and
// s2 (region eu); the parent logical cluster "parent" at root:org; the
// types root:universal (initializer) and root:organization.
type env struct {
	r          *workspaceReconciler
	workspaces *fakeWorkspaces
	shards     *fakeShards
	shardObjs  map[string]*corev1alpha1.Shard
	names      []logicalcluster.Name
	// informer: whether getLogicalCluster shows the LogicalClusters of
	// the local shard (root) as well as the parent's; lcCache, what it
	// shows instead of the shard's current copy (nil: nothing).
	informer bool
	lcCache  map[logicalcluster.Name]*corev1alpha1.LogicalCluster
	// parents are the parent LogicalClusters on the server; cachedParents
	// what the informer shows of them.
	parents, cachedParents map[logicalcluster.Name]*corev1alpha1.LogicalCluster
}

func newEnv(t *testing.T, wss ...*tenancyv1alpha1.Workspace) *env {
	e := &env{
		lcCache:    map[logicalcluster.Name]*corev1alpha1.LogicalCluster{},
		workspaces: newFakeWorkspaces(wss...),
		shards:     newFakeShards(),
		shardObjs: map[string]*corev1alpha1.Shard{
			"root": shard("root", map[string]string{"region": "eu"}),
			"s1":   shard("s1", map[string]string{"region": "us"}),
			"s2":   shard("s2", map[string]string{"region": "eu"}),
		},
	}
	e.shardObjs["s1"].Spec.ExternalURL = "https://proxy.example.com"
	e.parents = map[logicalcluster.Name]*corev1alpha1.LogicalCluster{
		"parent": {ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{
			logicalcluster.PathAnnotationKey: "root:org", corev1alpha1.RequiredGroupsAnnotationKey: "org-members",
		}}},
	}
	e.cachedParents = e.parents
	e.r = &workspaceReconciler{
		localShard:   "root",
		getWorkspace: e.workspaces.cached,
		listShards: func() ([]*corev1alpha1.Shard, error) {
			var out []*corev1alpha1.Shard
			for _, s := range e.shardObjs {
				out = append(out, s)
			}
			return out, nil
		},
		getShard: func(name string) (*corev1alpha1.Shard, error) {
			if s, ok := e.shardObjs[name]; ok {
				return s, nil
			}
			return nil, apierrors.NewNotFound(corev1alpha1.Resource("shards"), name)
		},
		getLogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			if lc, ok := e.cachedParents[cluster]; ok {
				return lc, nil
			}
			if lc, ok := e.lcCache[cluster]; ok && e.informer {
				if lc == nil {
					return nil, apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), "cluster")
				}
				return lc.DeepCopy(), nil
			}
			if lc := e.shards.lookup("root", cluster); lc != nil && e.informer {
				return lc, nil
			}
			return nil, apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), "cluster")
		},
		readParent: func(_ context.Context, cluster logicalcluster.Name, _ string) (*corev1alpha1.LogicalCluster, error) {
			if lc, ok := e.parents[cluster]; ok {
				return lc.DeepCopy(), nil
			}
			return nil, apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), "cluster")
		},
		lookupType: typeLookup(
			wtype("root", "universal", true),
			wtype("root", "organization", false, ref("root", "universal")),
		),
		workspaces:      e.workspaces,
		logicalClusters: e.shards,
		newName: func() logicalcluster.Name {
			if len(e.names) == 0 {
				t.Fatalf("the test ran out of cluster names")
			}
			n := e.names[0]
			e.names = e.names[1:]
			return n
		},
		backoff: newBackoff(initialBackoff, maxBackoff),
		written: newVersions(versionTTL, time.Now),
		read:    newVersions(versionTTL, time.Now),
	}
	return e
}

func (e *env) reconcile(t *testing.T, cluster logicalcluster.Name, name string) reconciler.Result {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	res, err := e.r.reconcile(ctx, reconciler.Key{Cluster: cluster, Name: name})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

func newWorkspace(cluster logicalcluster.Name, name string) *tenancyv1alpha1.Workspace {
	return &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID("uid-" + name),
			Annotations: map[string]string{
				logicalcluster.AnnotationKey:                            cluster.String(),
				tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey: `{"username":"alice"}`,
			},
		},
		Spec:   tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "organization"}},
		Status: tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseScheduling},
	}
}

// Names chosen by an earlier reconcile, in the generated format.
const (
	earlier = "earlier000000000"
	taken   = "taken00000000000"
)

// genName pads prefix ([a-z0-9], starting with a letter) with zeros to a
// name in the format the controller generates.
func genName(prefix string) logicalcluster.Name {
	return logicalcluster.Name(prefix + strings.Repeat("0", clusterNameLength-len(prefix)))
}

// nameOn returns a cluster name that rendezvous hashing maps to shard
// among shards.
func nameOn(t *testing.T, e *env, shard string, selector map[string]string) logicalcluster.Name {
	t.Helper()
	shards, _ := e.r.listShards()
	var sel *metav1.LabelSelector
	if selector != nil {
		sel = &metav1.LabelSelector{MatchLabels: selector}
	}
	matching, _ := matchingShards(shards, sel)
	for i := range 1000 {
		n := genName(fmt.Sprintf("c%s%d", shard, i))
		if chooseShard(n, matching).Name == shard {
			return n
		}
	}
	t.Fatalf("no name maps to shard %s", shard)
	return ""
}

func TestScheduleAndFollow(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "s1", nil)
	e.names = []logicalcluster.Name{name}

	res := e.reconcile(t, "parent", "team")
	if res.RequeueAfter != initialBackoff {
		t.Errorf("requeue after %v, want %v while initializing", res.RequeueAfter, initialBackoff)
	}
	ws := e.workspaces.get(t, "parent", "team")
	if ws.Spec.Cluster != name.String() || ws.Spec.URL != "https://proxy.example.com/clusters/root:org:team" {
		t.Errorf("spec = %+v", ws.Spec)
	}
	if ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] != "s1" || ws.Annotations[ClusterAnnotationKey] != name.String() {
		t.Errorf("annotations = %v", ws.Annotations)
	}
	if !hasFinalizer(ws) {
		t.Errorf("finalizers = %v", ws.Finalizers)
	}
	if ws.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing {
		t.Errorf("phase = %q", ws.Status.Phase)
	}
	if !conditionsv1alpha1.IsTrue(ws, tenancyv1alpha1.WorkspaceScheduled) || !conditionsv1alpha1.IsFalse(ws, corev1alpha1.WorkspaceInitialized) {
		t.Errorf("conditions = %+v", ws.Status.Conditions)
	}
	if fmt.Sprint(ws.Status.Initializers) != "[system:owner root:universal]" {
		t.Errorf("status.initializers = %v", ws.Status.Initializers)
	}
	lc := e.shards.lookup("s1", name)
	if lc == nil {
		t.Fatalf("no LogicalCluster on s1")
	}
	if lc.Annotations["kcp.io/path"] != "root:org:team" || lc.Annotations["internal.tenancy.kcp.io/type"] != "root:organization" ||
		lc.Annotations["authorization.kcp.io/required-groups"] != "org-members" || lc.Spec.Owner.Cluster != "parent" {
		t.Errorf("LogicalCluster = %+v", lc.ObjectMeta)
	}

	// Still initializing: the next poll waits longer.
	if res := e.reconcile(t, "parent", "team"); res.RequeueAfter != 2*initialBackoff {
		t.Errorf("second poll after %v, want %v", res.RequeueAfter, 2*initialBackoff)
	}
	// One initializer done: progress resets the backoff.
	e.shards.setStatus("s1", name, "Initializing", "root:universal")
	if res := e.reconcile(t, "parent", "team"); res.RequeueAfter != initialBackoff {
		t.Errorf("poll after progress after %v, want %v", res.RequeueAfter, initialBackoff)
	}
	// Ready: no more polling.
	e.shards.setStatus("s1", name, "Ready")
	if res := e.reconcile(t, "parent", "team"); res.RequeueAfter != 0 {
		t.Errorf("requeued after %v once Ready", res.RequeueAfter)
	}
	ws = e.workspaces.get(t, "parent", "team")
	if ws.Status.Phase != "Ready" || len(ws.Status.Initializers) != 0 ||
		!conditionsv1alpha1.IsTrue(ws, corev1alpha1.WorkspaceInitialized) {
		t.Errorf("status = %+v", ws.Status)
	}
	if e.r.backoff.len() != 0 {
		t.Errorf("backoff state kept for a Ready workspace")
	}
	// Nothing to do: no write.
	writes := e.workspaces.writes
	e.reconcile(t, "parent", "team")
	if e.workspaces.writes != writes {
		t.Errorf("a reconcile of a Ready workspace wrote it")
	}
}

func TestScheduleRespectsSelector(t *testing.T) {
	ws := newWorkspace("parent", "team")
	ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}
	e := newEnv(t, ws)
	e.names = []logicalcluster.Name{genName("abc"), genName("def"), genName("ghi")}
	e.reconcile(t, "parent", "team")
	got := e.workspaces.get(t, "parent", "team").Annotations[corev1alpha1.LogicalClusterShardAnnotationKey]
	if got != "root" && got != "s2" {
		t.Errorf("scheduled onto %q, want an eu shard", got)
	}
}

func TestScheduleNoMatchingShard(t *testing.T) {
	ws := newWorkspace("parent", "team")
	ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "mars"}}}
	e := newEnv(t, ws)
	e.names = []logicalcluster.Name{genName("abc")}
	res := e.reconcile(t, "parent", "team")
	if res.RequeueAfter != unschedulableRetry {
		t.Errorf("requeue after %v, want %v", res.RequeueAfter, unschedulableRetry)
	}
	got := e.workspaces.get(t, "parent", "team")
	if conditionsv1alpha1.GetReason(got, tenancyv1alpha1.WorkspaceScheduled) != tenancyv1alpha1.WorkspaceReasonUnschedulable ||
		got.Spec.Cluster != "" || got.Status.Phase != "Scheduling" || e.shards.count() != 0 {
		t.Errorf("workspace = %+v, %d logical clusters", got, e.shards.count())
	}
}

func TestScheduleMissingType(t *testing.T) {
	ws := newWorkspace("parent", "team")
	ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "nope"}
	e := newEnv(t, ws)
	if res := e.reconcile(t, "parent", "team"); res.RequeueAfter != unschedulableRetry {
		t.Errorf("requeue after %v", res.RequeueAfter)
	}
	if got := e.workspaces.get(t, "parent", "team"); !conditionsv1alpha1.IsFalse(got, tenancyv1alpha1.WorkspaceScheduled) || e.shards.count() != 0 {
		t.Errorf("conditions = %+v", got.Status.Conditions)
	}
}

func TestScheduleNameTakenByAnotherOwner(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	taken, free := nameOn(t, e, "s2", nil), nameOn(t, e, "s1", nil)
	e.shards.put("s2", taken, &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
		Spec:       corev1alpha1.LogicalClusterSpec{Owner: &corev1alpha1.LogicalClusterOwner{Resource: "workspaces", Name: "other", UID: "other-uid"}},
	})
	e.names = []logicalcluster.Name{taken, free}
	e.reconcile(t, "parent", "team")
	ws := e.workspaces.get(t, "parent", "team")
	if ws.Spec.Cluster != free.String() || ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] != "s1" {
		t.Errorf("scheduled to %s on %s, want %s on s1", ws.Spec.Cluster, ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey], free)
	}
	if lc := e.shards.lookup("s2", taken); lc.Spec.Owner.UID != "other-uid" {
		t.Errorf("the other owner's logical cluster was changed")
	}
}

func TestScheduleAdoptsAfterCrash(t *testing.T) {
	// A previous reconcile persisted its choice and created the
	// LogicalCluster, then crashed before recording spec.cluster.
	ws := newWorkspace("parent", "team")
	ws.Finalizers = []string{corev1alpha1.LogicalClusterFinalizer}
	ws.Annotations[ClusterAnnotationKey] = earlier
	ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] = "s2"
	e := newEnv(t, ws)
	e.shards.put("s2", earlier, newLogicalCluster(ws, "parent", parentInfo{path: logicalcluster.NewPath("root:org")}, "s2", nil))
	e.reconcile(t, "parent", "team")
	got := e.workspaces.get(t, "parent", "team")
	if got.Spec.Cluster != earlier || e.shards.count() != 1 {
		t.Errorf("spec.cluster = %q with %d logical clusters, want the earlier one adopted", got.Spec.Cluster, e.shards.count())
	}
}

func TestScheduleWithStaleCache(t *testing.T) {
	// The store has the choice of an earlier reconcile; the cache does not
	// show it yet. The conflict makes the reconcile see and keep it.
	stored := newWorkspace("parent", "team")
	stored.Finalizers = []string{corev1alpha1.LogicalClusterFinalizer}
	stored.Annotations[ClusterAnnotationKey] = earlier
	stored.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] = "s2"
	e := newEnv(t, stored)
	old := newWorkspace("parent", "team")
	old.ResourceVersion = "0"
	e.workspaces.stale[reconciler.Key{Cluster: "parent", Name: "team"}] = old
	e.shards.put("s2", earlier, newLogicalCluster(stored, "parent", parentInfo{path: logicalcluster.NewPath("root:org")}, "s2", nil))
	e.names = []logicalcluster.Name{nameOn(t, e, "s1", nil)}

	e.reconcile(t, "parent", "team")
	if got := e.workspaces.get(t, "parent", "team"); got.Spec.Cluster != earlier || e.shards.count() != 1 {
		t.Errorf("spec.cluster = %q with %d logical clusters, want the persisted choice", got.Spec.Cluster, e.shards.count())
	}
}

func TestScheduleRetriesConflicts(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	e.names = []logicalcluster.Name{nameOn(t, e, "root", nil)}
	e.workspaces.conflicts = 3
	e.reconcile(t, "parent", "team")
	if got := e.workspaces.get(t, "parent", "team"); got.Spec.Cluster == "" || got.Status.Phase != "Initializing" {
		t.Errorf("workspace not scheduled through conflicts: %+v", got)
	}
}

// TestCacheBehindOwnWrite: a reconcile that starts again before the
// informer shows the status the previous one wrote (the events of its
// first writes queue the key again at once) waits for the cache instead
// of writing what it would compute from the old copy, which could only
// conflict and cost a read.
func TestCacheBehindOwnWrite(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "s1", nil)
	e.names = []logicalcluster.Name{name}
	e.reconcile(t, "parent", "team")
	if ws := e.workspaces.get(t, "parent", "team"); ws.Status.Phase != "Initializing" {
		t.Fatalf("phase = %q after scheduling", ws.Status.Phase)
	}

	// The cache shows the Workspace scheduled, but not its status yet.
	e.workspaces.lag = true
	if ws, _ := e.workspaces.cached("parent", "team"); ws.Spec.Cluster == "" || ws.Status.Phase != "Scheduling" {
		t.Fatalf("test setup: cached workspace %+v", ws)
	}
	writes, gets := e.workspaces.writes, e.workspaces.gets
	lcGets := e.shards.gets
	res := e.reconcile(t, "parent", "team")
	if e.workspaces.conflicted != 0 || e.workspaces.gets != gets || e.workspaces.writes != writes || e.shards.gets != lcGets {
		t.Errorf("on a cache behind its own write: %d conflicts, %d workspace reads, %d writes, %d logical cluster reads; want none",
			e.workspaces.conflicted, e.workspaces.gets-gets, e.workspaces.writes-writes, e.shards.gets-lcGets)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > versionTTL {
		t.Errorf("requeue after %v, want a safety net within %v", res.RequeueAfter, versionTTL)
	}

	// The cache caught up: following goes on, and nothing is left noted.
	e.workspaces.lag = false
	e.shards.setStatus("s1", name, "Ready")
	e.reconcile(t, "parent", "team")
	if ws := e.workspaces.get(t, "parent", "team"); ws.Status.Phase != "Ready" || e.workspaces.conflicted != 0 {
		t.Errorf("phase %q with %d conflicts once the cache caught up", ws.Status.Phase, e.workspaces.conflicted)
	}
	e.reconcile(t, "parent", "team")
	if n := e.r.written.len(); n != 0 {
		t.Errorf("%d versions still noted once the cache caught up", n)
	}
}

// TestCacheBehindAnotherWriter: a cache that is behind a write of someone
// else is not waited for; the conflict tells.
func TestCacheBehindAnotherWriter(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "s1", nil)
	e.names = []logicalcluster.Name{name}
	e.reconcile(t, "parent", "team")
	e.r.written.forget(reconciler.Key{Cluster: "parent", Name: "team"})
	e.workspaces.lag = true
	e.reconcile(t, "parent", "team")
	if e.workspaces.conflicted != 1 {
		t.Errorf("%d conflicts, want the write on the old copy tried", e.workspaces.conflicted)
	}
}

func TestShardUnavailable(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "s1", nil)
	e.names = []logicalcluster.Name{name}
	e.shards.down["s1"] = true

	// Creating fails: the choice is kept, the condition says why.
	if res := e.reconcile(t, "parent", "team"); res.RequeueAfter != initialBackoff {
		t.Errorf("requeue after %v", res.RequeueAfter)
	}
	ws := e.workspaces.get(t, "parent", "team")
	if ws.Status.Phase != "Scheduling" || conditionsv1alpha1.GetReason(ws, tenancyv1alpha1.WorkspaceScheduled) != tenancyv1alpha1.WorkspaceReasonUnavailable {
		t.Errorf("status = %+v", ws.Status)
	}
	if res := e.reconcile(t, "parent", "team"); res.RequeueAfter != 2*initialBackoff {
		t.Errorf("second retry after %v", res.RequeueAfter)
	}

	// Back up: scheduled on the same name.
	e.shards.down["s1"] = false
	e.reconcile(t, "parent", "team")
	ws = e.workspaces.get(t, "parent", "team")
	if ws.Spec.Cluster != name.String() || !conditionsv1alpha1.IsTrue(ws, tenancyv1alpha1.WorkspaceScheduled) {
		t.Errorf("after recovery: spec.cluster %q, conditions %+v", ws.Spec.Cluster, ws.Status.Conditions)
	}

	// Following while the shard is down keeps the phase.
	e.shards.down["s1"] = true
	e.reconcile(t, "parent", "team")
	ws = e.workspaces.get(t, "parent", "team")
	if ws.Status.Phase != "Initializing" || conditionsv1alpha1.GetReason(ws, tenancyv1alpha1.WorkspaceScheduled) != tenancyv1alpha1.WorkspaceReasonUnavailable {
		t.Errorf("while down: %+v", ws.Status)
	}
}

func TestDelete(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "s2", nil)
	e.names = []logicalcluster.Name{name}
	e.reconcile(t, "parent", "team")
	e.shards.keepDeleted = true

	ws := e.workspaces.get(t, "parent", "team")
	if err := e.workspaces.Delete(context.Background(), "parent", "team", ws.UID); err != nil {
		t.Fatal(err)
	}
	if res := e.reconcile(t, "parent", "team"); res.RequeueAfter == 0 {
		t.Errorf("not polling the deleted logical cluster")
	}
	lc := e.shards.lookup("s2", name)
	if lc == nil || lc.DeletionTimestamp == nil {
		t.Fatalf("LogicalCluster not deleted: %+v", lc)
	}
	if phase := e.workspaces.get(t, "parent", "team").Status.Phase; phase != "Deleting" {
		t.Errorf("phase = %q while the logical cluster is deleted, want Deleting", phase)
	}
	// Content deletion still running: the workspace stays.
	e.reconcile(t, "parent", "team")
	if ws := e.workspaces.get(t, "parent", "team"); !hasFinalizer(ws) {
		t.Fatalf("finalizer removed while the logical cluster exists")
	}
	// Gone: the workspace goes.
	e.shards.mu.Lock()
	delete(e.shards.lcs["s2"], name)
	e.shards.mu.Unlock()
	e.reconcile(t, "parent", "team")
	if _, err := e.workspaces.Get(context.Background(), "parent", "team"); !apierrors.IsNotFound(err) {
		t.Errorf("workspace still there: %v", err)
	}
	if e.r.backoff.len() != 0 {
		t.Errorf("backoff state kept for a deleted workspace")
	}
}

func TestDeleteUnscheduled(t *testing.T) {
	ws := newWorkspace("parent", "team")
	ws.Finalizers = []string{corev1alpha1.LogicalClusterFinalizer}
	now := metav1.NewTime(time.Now())
	ws.DeletionTimestamp = &now
	e := newEnv(t, ws)
	e.reconcile(t, "parent", "team")
	if _, err := e.workspaces.Get(context.Background(), "parent", "team"); !apierrors.IsNotFound(err) {
		t.Errorf("unscheduled workspace kept: %v", err)
	}
}

func TestDeleteChosenButNotRecorded(t *testing.T) {
	// Deleted after the LogicalCluster was created but before spec.cluster
	// was set: the LogicalCluster is deleted too.
	ws := newWorkspace("parent", "team")
	ws.Finalizers = []string{corev1alpha1.LogicalClusterFinalizer}
	ws.Annotations[ClusterAnnotationKey] = earlier
	ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] = "s2"
	now := metav1.NewTime(time.Now())
	ws.DeletionTimestamp = &now
	e := newEnv(t, ws)
	e.shards.put("s2", earlier, newLogicalCluster(ws, "parent", parentInfo{path: logicalcluster.NewPath("root:org")}, "s2", nil))
	e.reconcile(t, "parent", "team")
	if e.shards.count() != 0 {
		t.Errorf("logical cluster not deleted")
	}
	e.reconcile(t, "parent", "team")
	if _, err := e.workspaces.Get(context.Background(), "parent", "team"); !apierrors.IsNotFound(err) {
		t.Errorf("workspace kept: %v", err)
	}
}

func TestDeleteLeavesForeignLogicalCluster(t *testing.T) {
	ws := newWorkspace("parent", "team")
	ws.Finalizers = []string{corev1alpha1.LogicalClusterFinalizer}
	ws.Annotations[ClusterAnnotationKey] = taken
	ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] = "s2"
	now := metav1.NewTime(time.Now())
	ws.DeletionTimestamp = &now
	e := newEnv(t, ws)
	e.shards.put("s2", taken, &corev1alpha1.LogicalCluster{Spec: corev1alpha1.LogicalClusterSpec{Owner: &corev1alpha1.LogicalClusterOwner{Resource: "workspaces", Name: "x", UID: "x"}}})
	e.reconcile(t, "parent", "team")
	if e.shards.count() != 1 {
		t.Errorf("another owner's logical cluster was deleted")
	}
	if _, err := e.workspaces.Get(context.Background(), "parent", "team"); !apierrors.IsNotFound(err) {
		t.Errorf("workspace kept: %v", err)
	}
}

func TestLogicalClusterGoneDeletesWorkspace(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "root", nil)
	e.names = []logicalcluster.Name{name}
	e.reconcile(t, "parent", "team")
	e.shards.mu.Lock()
	delete(e.shards.lcs["root"], name)
	e.shards.mu.Unlock()

	e.reconcile(t, "parent", "team") // deletes the workspace
	e.reconcile(t, "parent", "team") // releases it
	if _, err := e.workspaces.Get(context.Background(), "parent", "team"); !apierrors.IsNotFound(err) {
		t.Errorf("workspace kept after its logical cluster was deleted: %v", err)
	}
}

func TestGoneWorkspace(t *testing.T) {
	e := newEnv(t)
	if res := e.reconcile(t, "parent", "nope"); res.RequeueAfter != 0 {
		t.Errorf("requeued a missing workspace")
	}
}

func TestReadyWorkspacesAreNotPolled(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shard    string
		informer bool
		deleting bool
		remove   bool
		wantGets int
	}{
		{name: "remote", shard: "s1"},
		{name: "local, Ready in the informer", shard: "root", informer: true},
		{name: "local, not in the informer", shard: "root", wantGets: 1},
		{name: "local, deleting in the informer", shard: "root", informer: true, deleting: true},
		{name: "local, gone", shard: "root", informer: true, remove: true, wantGets: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, newWorkspace("parent", "team"))
			name := nameOn(t, e, tc.shard, nil)
			e.names = []logicalcluster.Name{name}
			e.reconcile(t, "parent", "team")
			e.shards.setStatus(tc.shard, name, "Ready")
			e.reconcile(t, "parent", "team")
			if ws := e.workspaces.get(t, "parent", "team"); ws.Status.Phase != "Ready" {
				t.Fatalf("phase = %q", ws.Status.Phase)
			}
			e.informer = tc.informer
			if tc.deleting {
				// The informer saw a deletion that the workspace has not:
				// it is followed, from the informer.
				lc := e.shards.lookup(tc.shard, name)
				now := metav1.Now()
				lc.DeletionTimestamp = &now
				e.shards.mu.Lock()
				e.shards.lcs[tc.shard][name] = lc
				e.shards.mu.Unlock()
			}
			if tc.remove {
				// The informer no longer shows it: the shard tells.
				e.shards.mu.Lock()
				delete(e.shards.lcs[tc.shard], name)
				e.shards.mu.Unlock()
			}
			gets := e.shards.gets
			e.reconcile(t, "parent", "team")
			if got := e.shards.gets - gets; got != tc.wantGets {
				t.Errorf("%d GETs of the logical cluster, want %d", got, tc.wantGets)
			}
			if ws := e.workspaces.get(t, "parent", "team"); tc.remove != (ws.DeletionTimestamp != nil) {
				t.Errorf("workspace deleted: %v, want %v", ws.DeletionTimestamp != nil, tc.remove)
			}
		})
	}
}

// TestFollowLocalFromInformer: the LogicalCluster of a Workspace on this
// shard is followed from the informer, without a request.
func TestFollowLocalFromInformer(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "root", nil)
	e.names = []logicalcluster.Name{name}
	e.informer = true
	e.reconcile(t, "parent", "team")

	for _, step := range []struct {
		phase        corev1alpha1.LogicalClusterPhaseType
		initializers []corev1alpha1.LogicalClusterInitializer
		requeue      bool
	}{
		{phase: "Initializing", initializers: []corev1alpha1.LogicalClusterInitializer{"system:owner", "root:universal"}, requeue: true},
		{phase: "Initializing", initializers: []corev1alpha1.LogicalClusterInitializer{"root:universal"}, requeue: true},
		{phase: "Ready"},
	} {
		e.shards.setStatus("root", name, step.phase, step.initializers...)
		res := e.reconcile(t, "parent", "team")
		ws := e.workspaces.get(t, "parent", "team")
		if ws.Status.Phase != step.phase || fmt.Sprint(ws.Status.Initializers) != fmt.Sprint(step.initializers) {
			t.Errorf("status %s %v, want %s %v", ws.Status.Phase, ws.Status.Initializers, step.phase, step.initializers)
		}
		if (res.RequeueAfter > 0) != step.requeue {
			t.Errorf("%s: requeue after %v", step.phase, res.RequeueAfter)
		}
	}
	if e.shards.gets != 0 {
		t.Errorf("%d GETs of a logical cluster the informer shows", e.shards.gets)
	}
	if n := e.r.read.len(); n != 0 {
		t.Errorf("%d versions still noted once the informer caught up", n)
	}
}

// TestFollowLocalInformerMiss: a LogicalCluster of this shard the informer
// does not show (it lags behind the create) is read from the shard, not
// taken for gone; a copy of the informer older than what the shard
// answered is not mirrored.
func TestFollowLocalInformerMiss(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "root", nil)
	e.names = []logicalcluster.Name{name}
	e.informer = true
	e.lcCache[name] = nil
	e.reconcile(t, "parent", "team")
	created := e.shards.lookup("root", name)

	// The first initializer is done; the informer shows nothing yet.
	e.shards.setStatus("root", name, "Initializing", "root:universal")
	e.reconcile(t, "parent", "team")
	ws, err := e.workspaces.Get(context.Background(), "parent", "team")
	if err != nil {
		t.Fatalf("workspace deleted on an informer miss: %v", err)
	}
	if fmt.Sprint(ws.Status.Initializers) != "[root:universal]" || e.shards.gets != 1 {
		t.Errorf("status.initializers %v after %d GETs, want [root:universal] from one GET", ws.Status.Initializers, e.shards.gets)
	}

	// The informer shows the LogicalCluster as created: older than what
	// the shard answered.
	e.lcCache[name] = created
	e.reconcile(t, "parent", "team")
	if ws := e.workspaces.get(t, "parent", "team"); fmt.Sprint(ws.Status.Initializers) != "[root:universal]" {
		t.Errorf("status.initializers went back to %v from an old copy of the informer", ws.Status.Initializers)
	}

	// The informer caught up: no more GETs.
	delete(e.lcCache, name)
	gets := e.shards.gets
	e.shards.setStatus("root", name, "Ready")
	e.reconcile(t, "parent", "team")
	if ws := e.workspaces.get(t, "parent", "team"); ws.Status.Phase != "Ready" || e.shards.gets != gets {
		t.Errorf("phase %q after %d more GETs, want Ready from the informer", ws.Status.Phase, e.shards.gets-gets)
	}
	if n := e.r.read.len(); n != 0 {
		t.Errorf("%d versions still noted once the informer caught up", n)
	}

	// Gone from the informer and from the shard: the shard's word deletes
	// the workspace.
	e.shards.mu.Lock()
	delete(e.shards.lcs["root"], name)
	e.shards.mu.Unlock()
	e.reconcile(t, "parent", "team")
	if ws := e.workspaces.get(t, "parent", "team"); ws.DeletionTimestamp == nil {
		t.Errorf("workspace kept although the shard says its logical cluster is gone")
	}
}

func TestScheduleIgnoresClusterAnnotationNotGenerated(t *testing.T) {
	for _, bad := range []string{
		"root", "system:admin", "root:org:team", "earlier:00000000", "earlier-00000000",
		"Earlier000000000", "1arlier000000000", "earlier00000000", "earlier0000000000",
	} {
		t.Run(bad, func(t *testing.T) {
			ws := newWorkspace("parent", "team")
			ws.Finalizers = []string{corev1alpha1.LogicalClusterFinalizer}
			ws.Annotations[ClusterAnnotationKey] = bad
			ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] = "s2"
			e := newEnv(t, ws)
			// A LogicalCluster under that name that even names the
			// workspace as its owner: it must not be adopted.
			e.shards.put("s2", logicalcluster.Name(bad), newLogicalCluster(ws, "parent", parentInfo{path: logicalcluster.NewPath("root:org")}, "s2", nil))
			fresh := nameOn(t, e, "s1", nil)
			e.names = []logicalcluster.Name{fresh}

			e.reconcile(t, "parent", "team")
			got := e.workspaces.get(t, "parent", "team")
			if got.Spec.Cluster != fresh.String() || got.Annotations[ClusterAnnotationKey] != fresh.String() ||
				got.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] != "s1" {
				t.Errorf("scheduled to %q (annotations %v), want a fresh name %s on s1", got.Spec.Cluster, got.Annotations, fresh)
			}
			if e.shards.lookup("s1", fresh) == nil || e.shards.count() != 2 {
				t.Errorf("no new LogicalCluster created")
			}
		})
	}
}

func TestDeleteIgnoresClusterAnnotationNotGenerated(t *testing.T) {
	ws := newWorkspace("parent", "team")
	ws.Finalizers = []string{corev1alpha1.LogicalClusterFinalizer}
	ws.Annotations[ClusterAnnotationKey] = "root"
	ws.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey] = "root"
	now := metav1.Now()
	ws.DeletionTimestamp = &now
	e := newEnv(t, ws)
	// Made to look owned by the workspace: it must not be deleted.
	e.shards.put("root", "root", newLogicalCluster(ws, "parent", parentInfo{path: logicalcluster.NewPath("root:org")}, "root", nil))

	e.reconcile(t, "parent", "team")
	if lc := e.shards.lookup("root", "root"); lc == nil || lc.DeletionTimestamp != nil {
		t.Errorf("the logical cluster named by the annotation was deleted")
	}
	if _, err := e.workspaces.Get(context.Background(), "parent", "team"); !apierrors.IsNotFound(err) {
		t.Errorf("workspace kept: %v", err)
	}
}

// TestNoVerdictWithoutTheShard: a Workspace is deleted, or released when
// it is deleted, only on the word of its shard that its LogicalCluster is
// gone; a missing Shard, an unreachable shard or a 404 that is not about
// the LogicalCluster keep it and show it Unavailable.
func TestNoVerdictWithoutTheShard(t *testing.T) {
	for _, fault := range []struct {
		name  string
		apply func(e *env)
		undo  func(e *env)
	}{
		{name: "Shard missing", apply: func(e *env) { delete(e.shardObjs, "s2") }, undo: func(e *env) { e.shardObjs["s2"] = shard("s2", map[string]string{"region": "eu"}) }},
		{name: "shard unreachable", apply: func(e *env) { e.shards.down["s2"] = true }, undo: func(e *env) { e.shards.down["s2"] = false }},
		{name: "404 not from the API server", apply: func(e *env) {
			e.shards.getErr = apierrors.NewGenericServerResponse(http.StatusNotFound, "get", corev1alpha1.Resource("logicalclusters"), "cluster", "404 page not found", 0, true)
		}, undo: func(e *env) { e.shards.getErr = nil }},
		{name: "404 of a path the server does not serve", apply: func(e *env) {
			e.shards.getErr = &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound,
				Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource", Details: &metav1.StatusDetails{}}}
		}, undo: func(e *env) { e.shards.getErr = nil }},
	} {
		for _, deleting := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, deleting %v", fault.name, deleting), func(t *testing.T) {
				e := newEnv(t, newWorkspace("parent", "team"))
				name := nameOn(t, e, "s2", nil)
				e.names = []logicalcluster.Name{name}
				e.reconcile(t, "parent", "team")
				if deleting {
					if err := e.workspaces.Delete(context.Background(), "parent", "team", "uid-team"); err != nil {
						t.Fatal(err)
					}
				}
				fault.apply(e)

				var writes int
				for i := range 5 {
					if res := e.reconcile(t, "parent", "team"); res.RequeueAfter == 0 {
						t.Errorf("attempt %d not retried", i)
					}
					if i == 0 {
						writes = e.workspaces.writes
					}
				}
				ws, err := e.workspaces.Get(context.Background(), "parent", "team")
				if err != nil {
					t.Fatalf("workspace gone: %v", err)
				}
				if !hasFinalizer(ws) || (ws.DeletionTimestamp != nil) != deleting {
					t.Errorf("finalizers %v, deletionTimestamp %v", ws.Finalizers, ws.DeletionTimestamp)
				}
				if !isUnavailable(ws) {
					t.Errorf("conditions = %+v, want WorkspaceScheduled False/Unavailable", ws.Status.Conditions)
				}
				if e.workspaces.writes != writes {
					t.Errorf("%d more writes while the fault lasted, want the condition written once", e.workspaces.writes-writes)
				}
				if lc := e.shards.lookup("s2", name); lc == nil {
					t.Fatalf("the logical cluster was deleted")
				}

				// The fault is over: a deleted workspace goes with its
				// logical cluster, the other one is followed again.
				fault.undo(e)
				e.reconcile(t, "parent", "team")
				e.reconcile(t, "parent", "team")
				ws, err = e.workspaces.Get(context.Background(), "parent", "team")
				switch {
				case deleting:
					if !apierrors.IsNotFound(err) || e.shards.lookup("s2", name) != nil {
						t.Errorf("after the fault: workspace %v (%v), logical cluster left: %v", ws, err, e.shards.lookup("s2", name) != nil)
					}
				case err != nil || !conditionsv1alpha1.IsTrue(ws, tenancyv1alpha1.WorkspaceScheduled):
					t.Errorf("after the fault: workspace %+v, %v", ws, err)
				}
			})
		}
	}
}

func TestUnavailableBackoff(t *testing.T) {
	e := newEnv(t, newWorkspace("parent", "team"))
	name := nameOn(t, e, "s1", nil)
	e.names = []logicalcluster.Name{name}
	e.shards.down["s1"] = true

	retryUntilCapped := func() {
		t.Helper()
		var last time.Duration
		for i := range 20 {
			d := e.reconcile(t, "parent", "team").RequeueAfter
			if d > unavailableMaxBackoff || (d < last) || (d == last && d != unavailableMaxBackoff) {
				t.Fatalf("attempt %d after %v, the one before after %v: want doubling up to %v", i, d, last, unavailableMaxBackoff)
			}
			last = d
		}
		if last != unavailableMaxBackoff {
			t.Errorf("delay reached %v, want %v", last, unavailableMaxBackoff)
		}
	}
	// Down while scheduling, then while following.
	for _, phase := range []corev1alpha1.LogicalClusterPhaseType{"Scheduling", "Initializing"} {
		e.shards.down["s1"] = true
		retryUntilCapped()
		if ws := e.workspaces.get(t, "parent", "team"); ws.Status.Phase != phase || !isUnavailable(ws) {
			t.Fatalf("status while down = %+v, want phase %s and Unavailable", ws.Status, phase)
		}

		// Back: the workspace is polled eagerly again.
		e.shards.down["s1"] = false
		if d := e.reconcile(t, "parent", "team").RequeueAfter; d != initialBackoff {
			t.Errorf("%s: first poll after recovery after %v, want %v", phase, d, initialBackoff)
		}
		if d := e.reconcile(t, "parent", "team").RequeueAfter; d != 2*initialBackoff {
			t.Errorf("%s: second poll after recovery after %v, want %v", phase, d, 2*initialBackoff)
		}
	}
}

func TestIsLogicalClusterNotFound(t *testing.T) {
	lcs := corev1alpha1.Resource("logicalclusters")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"the LogicalCluster", apierrors.NewNotFound(lcs, "cluster"), true},
		{"wrapped", fmt.Errorf("getting: %w", apierrors.NewNotFound(lcs, "cluster")), true},
		{"another name", apierrors.NewNotFound(lcs, "other"), false},
		{"another resource", apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), "cluster"), false},
		{"not a status", apierrors.NewGenericServerResponse(http.StatusNotFound, "get", lcs, "cluster", "404 page not found", 0, true), false},
		{"no details", &apierrors.StatusError{ErrStatus: metav1.Status{Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound}}, false},
		{"forbidden", apierrors.NewForbidden(lcs, "cluster", errors.New("no")), false},
		{"connection refused", errConnectionRefused, false},
		{"nil", nil, false},
	} {
		if got := isLogicalClusterNotFound(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestScheduleInheritsFromTheParentAsStored(t *testing.T) {
	// The required groups of the parent were just set; the informer does
	// not show them yet.
	e := newEnv(t, newWorkspace("parent", "team"))
	e.cachedParents = map[logicalcluster.Name]*corev1alpha1.LogicalCluster{
		"parent": {ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{logicalcluster.PathAnnotationKey: "root:org"}}},
	}
	name := nameOn(t, e, "s1", nil)
	e.names = []logicalcluster.Name{name}
	e.reconcile(t, "parent", "team")
	lc := e.shards.lookup("s1", name)
	if lc == nil || lc.Annotations[corev1alpha1.RequiredGroupsAnnotationKey] != "org-members" {
		t.Errorf("child LogicalCluster %+v, want the required groups of the parent as stored", lc)
	}
}
