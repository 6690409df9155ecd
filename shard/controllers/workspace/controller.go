package workspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// ControllerName names the controller in logs, queue metrics and its
	// user agent.
	ControllerName = "workspace"
	// DefaultWorkers is the number of Workspaces reconciled in parallel
	// unless Config.Workers says otherwise. Most of a reconcile is waiting
	// for another shard, so it is more than the shard's CPUs.
	DefaultWorkers = 10

	// remoteTimeout bounds every request to a shard. Once a request to a
	// shard has failed to reach it, the shard's circuit breaker lets one
	// request at a time wait that long (see breaker), so an unreachable
	// shard does not hold every worker.
	remoteTimeout = 15 * time.Second
	// maxRetryDelay caps the delay of retries after errors.
	maxRetryDelay = time.Minute
)

// logicalClustersResource is the resource of LogicalCluster objects.
var logicalClustersResource = corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters")

// Config configures the workspace controller of a shard.
type Config struct {
	// Informers is the shard's wildcard informer factory. New adds its
	// Workspaces and LogicalClusters informers (and its
	// Shards informer unless Shards is set); start the factory after New.
	Informers *informers.SharedInformerFactory
	// Shards, if set, is where Shard objects are read from instead of
	// Informers.Shards(), e.g. an informer of the cache server on shards
	// that do not host root. Shards are those of the root logical cluster.
	Shards *informers.Informer[*corev1alpha1.Shard]
	// ShardName is the name of this shard. A scheduled Workspace without
	// a core.kcp.io/shard annotation is assumed to live here.
	ShardName string
	// ShardConfig returns a config for the shard s: Host is its baseURL
	// (without /clusters/...), with credentials of system:masters. Every
	// LogicalCluster is created and deleted through it, over HTTPS, also
	// on the local shard, and read through it unless it is local and the
	// informer shows it. It is called once per shard and baseURL.
	ShardConfig func(s *corev1alpha1.Shard) (*rest.Config, error)
	// Loopback is the admin config of this shard, used to write its
	// Workspaces (a trailing /clusters/<name> is ignored).
	Loopback *rest.Config
	// TypeLookup resolves the WorkspaceType references of Workspaces and
	// of the types they extend.
	TypeLookup TypeLookup
	// Workers is the number of Workspaces reconciled in parallel; zero
	// means DefaultWorkers.
	Workers int
}

// Controller schedules the Workspaces of a shard onto shards, follows
// their logical clusters until they are Ready, and deletes them with their
// Workspace.
type Controller struct {
	ctrl *reconciler.Controller
}

// New returns the workspace controller for all logical clusters of the
// shard.
func New(cfg Config) (*Controller, error) {
	var missing []error
	if cfg.Informers == nil {
		missing = append(missing, errors.New("Informers is required"))
	}
	if cfg.ShardName == "" {
		missing = append(missing, errors.New("ShardName is required"))
	}
	if cfg.ShardConfig == nil {
		missing = append(missing, errors.New("ShardConfig is required"))
	}
	if cfg.Loopback == nil {
		missing = append(missing, errors.New("Loopback is required"))
	}
	if cfg.TypeLookup == nil {
		missing = append(missing, errors.New("TypeLookup is required"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, fmt.Errorf("%s controller: %w", ControllerName, err)
	}

	loopback := rest.CopyConfig(cfg.Loopback)
	rest.AddUserAgent(loopback, ControllerName)
	httpClient, err := rest.HTTPClientFor(loopback)
	if err != nil {
		return nil, fmt.Errorf("%s controller: building http client: %w", ControllerName, err)
	}
	local, err := clusters.NewKCPForConfigAndClient(loopback, httpClient)
	if err != nil {
		return nil, fmt.Errorf("%s controller: %w", ControllerName, err)
	}

	workspaces := cfg.Informers.Workspaces()
	lcs := cfg.Informers.LogicalClusters()
	var shardInformer informers.Informer[*corev1alpha1.Shard]
	if cfg.Shards != nil {
		shardInformer = *cfg.Shards
	} else {
		shardInformer = cfg.Informers.Shards()
	}

	remote := newShardClients(cfg.ShardConfig)
	r := &workspaceReconciler{
		localShard: cfg.ShardName,
		getWorkspace: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
			return workspaces.Lister().Cluster(cluster).Get(name)
		},
		listShards: func() ([]*corev1alpha1.Shard, error) {
			return shardInformer.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
		},
		getShard: func(name string) (*corev1alpha1.Shard, error) {
			return shardInformer.Lister().Cluster(logicalcluster.Root).Get(name)
		},
		getLogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			return lcs.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
		},
		readParent: func(ctx context.Context, cluster logicalcluster.Name, resourceVersion string) (*corev1alpha1.LogicalCluster, error) {
			if p, ok := lcs.Informer().(processedVersioner); ok && caughtUp(p.ProcessedResourceVersion(), resourceVersion) {
				if lc, err := lcs.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName); err == nil {
					return lc, nil
				}
			}
			c, err := local.For(cluster)
			if err != nil {
				return nil, err
			}
			return c.LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		},
		lookupType:      cfg.TypeLookup,
		workspaces:      workspaceClients{clients: local},
		logicalClusters: remote,
		newName:         newClusterName,
		backoff:         newBackoff(initialBackoff, maxBackoff),
		written:         newVersions(versionTTL, time.Now),
		read:            newVersions(versionTTL, time.Now),
	}

	workers := cfg.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	c := reconciler.New(ControllerName, reconciler.Func(r.reconcile), reconciler.Options{
		Workers:     workers,
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconciler.Key](5*time.Millisecond, maxRetryDelay),
	})
	if err := c.Watch(workspaces.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	// Local logical clusters wake their Workspace up at once; remote ones
	// are polled with backoff.
	if err := c.Watch(lcs.Informer(), reconciler.EnqueueMappedHandler(c, func(lc *corev1alpha1.LogicalCluster) []reconciler.Key {
		key, uid, ok := ownerOf(lc)
		if !ok {
			return nil
		}
		ws, err := workspaces.Lister().Cluster(key.Cluster).Get(key.Name)
		if err != nil || ws.UID != uid {
			return nil
		}
		return []reconciler.Key{key}
	})); err != nil {
		return nil, err
	}
	// A new or relabelled shard may make unschedulable Workspaces
	// schedulable, and a Shard that is back makes its Workspaces
	// available again.
	if err := c.Watch(shardInformer.Informer(), reconciler.EnqueueMappedHandler(c, func(s *corev1alpha1.Shard) []reconciler.Key {
		return workspacesForShard(s, func() ([]*tenancyv1alpha1.Workspace, error) {
			return workspaces.Lister().List(labels.Everything())
		}, cfg.ShardName)
	})); err != nil {
		return nil, err
	}
	// The clients and breaker of a deleted Shard go with it.
	if err := c.Watch(shardInformer.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if s, ok := obj.(*corev1alpha1.Shard); ok && logicalcluster.From(s) == logicalcluster.Root {
			remote.forget(s.Name)
		}
	}}); err != nil {
		return nil, err
	}
	return &Controller{ctrl: c}, nil
}

// workspacesForShard returns the keys of the Workspaces an event of the
// Shard s may concern: those not scheduled yet, and those whose shard s is
// and which show it Unavailable. Only Shards of root count: Shards
// elsewhere are not part of the installation.
func workspacesForShard(s *corev1alpha1.Shard, list func() ([]*tenancyv1alpha1.Workspace, error), localShard string) []reconciler.Key {
	if logicalcluster.From(s) != logicalcluster.Root {
		return nil
	}
	all, err := list()
	if err != nil {
		return nil
	}
	var keys []reconciler.Key
	for _, ws := range all {
		unscheduled := ws.Spec.Cluster == "" && ws.DeletionTimestamp == nil
		if unscheduled || (shardNameOf(ws, localShard) == s.Name && isUnavailable(ws)) {
			keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(ws), Name: ws.Name})
		}
	}
	return keys
}

// Name returns ControllerName.
func (c *Controller) Name() string { return c.ctrl.Name() }

// Run reconciles Workspaces until ctx is done.
func (c *Controller) Run(ctx context.Context) error { return c.ctrl.Run(ctx) }

// ownerOf returns the key and UID of the Workspace that owns the
// LogicalCluster lc, if a Workspace does.
func ownerOf(lc *corev1alpha1.LogicalCluster) (reconciler.Key, types.UID, bool) {
	owner := lc.Spec.Owner
	if lc.Name != corev1alpha1.LogicalClusterName || owner == nil {
		return reconciler.Key{}, "", false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil || gv.Group != tenancyv1alpha1.GroupName || owner.Resource != workspacesKind || owner.Namespace != "" {
		return reconciler.Key{}, "", false
	}
	cluster := logicalcluster.Name(owner.Cluster)
	if !cluster.IsValid() || owner.Name == "" {
		return reconciler.Key{}, "", false
	}
	return reconciler.Key{Cluster: cluster, Name: owner.Name}, owner.UID, true
}

// workspaceClients writes Workspaces of the local shard.
type workspaceClients struct {
	clients *clusters.Cache[*kcpclient.Clientset]
}

var _ workspaceClient = workspaceClients{}

func (w workspaceClients) Get(ctx context.Context, cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
	c, err := w.clients.For(cluster)
	if err != nil {
		return nil, err
	}
	return c.Workspaces().Get(ctx, name, metav1.GetOptions{})
}

func (w workspaceClients) Update(ctx context.Context, cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
	c, err := w.clients.For(cluster)
	if err != nil {
		return nil, err
	}
	return c.Workspaces().Update(ctx, ws, metav1.UpdateOptions{})
}

func (w workspaceClients) UpdateStatus(ctx context.Context, cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
	c, err := w.clients.For(cluster)
	if err != nil {
		return nil, err
	}
	return c.Workspaces().UpdateStatus(ctx, ws, metav1.UpdateOptions{})
}

func (w workspaceClients) Delete(ctx context.Context, cluster logicalcluster.Name, name string, uid types.UID) error {
	c, err := w.clients.For(cluster)
	if err != nil {
		return err
	}
	return c.Workspaces().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

// shardClients reaches LogicalClusters on every shard through its baseURL,
// with one http.Client and one circuit breaker per shard, shared by the
// clients of its logical clusters. Its state is per Shard, and dropped
// when the Shard is deleted.
type shardClients struct {
	config func(*corev1alpha1.Shard) (*rest.Config, error)
	// timeout bounds every request; dialTimeout bounds connecting.
	timeout, dialTimeout time.Duration
	// now is the clock of the breakers.
	now func() time.Time

	mu     sync.Mutex
	shards map[string]*shardClient
}

func newShardClients(config func(*corev1alpha1.Shard) (*rest.Config, error)) *shardClients {
	return &shardClients{
		config:      config,
		timeout:     remoteTimeout,
		dialTimeout: dialTimeout,
		now:         time.Now,
		shards:      map[string]*shardClient{},
	}
}

// shardClient holds the clients and the breaker of one shard at one
// baseURL.
type shardClient struct {
	baseURL    string
	httpClient *http.Client
	clients    *clusters.Cache[*kcpclient.Clientset]
	breaker    *breaker
}

var _ logicalClusterClient = &shardClients{}

// forCluster returns a client for the logical cluster cluster on shard,
// and the shard's breaker. Clients and breaker are new when the shard's
// baseURL changes.
func (s *shardClients) forCluster(shard *corev1alpha1.Shard, cluster logicalcluster.Name) (*kcpclient.Clientset, *breaker, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.shards[shard.Name]
	if sc == nil || sc.baseURL != shard.Spec.BaseURL {
		cfg, err := s.config(shard)
		if err != nil {
			return nil, nil, fmt.Errorf("config for shard %s: %w", shard.Name, err)
		}
		cfg = rest.CopyConfig(cfg)
		rest.AddUserAgent(cfg, ControllerName)
		if cfg.Dial == nil {
			cfg.Dial = (&net.Dialer{Timeout: s.dialTimeout, KeepAlive: 30 * time.Second}).DialContext
		}
		httpClient, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("http client for shard %s: %w", shard.Name, err)
		}
		cache, err := clusters.NewKCPForConfigAndClient(cfg, httpClient)
		if err != nil {
			return nil, nil, fmt.Errorf("clients for shard %s: %w", shard.Name, err)
		}
		if sc != nil {
			sc.httpClient.CloseIdleConnections()
		}
		sc = &shardClient{baseURL: shard.Spec.BaseURL, httpClient: httpClient, clients: cache,
			breaker: newBreaker(initialCoolDown, maxCoolDown, s.now)}
		s.shards[shard.Name] = sc
	}
	c, err := sc.clients.For(cluster)
	return c, sc.breaker, err
}

// forget drops the clients and breaker of the shard name, once its Shard
// is deleted.
func (s *shardClients) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc := s.shards[name]; sc != nil {
		sc.httpClient.CloseIdleConnections()
		delete(s.shards, name)
	}
}

// call runs fn with a client for cluster on shard, through the shard's
// breaker and with the request timeout.
func (s *shardClients) call(ctx context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name, fn func(context.Context, *kcpclient.Clientset) error) error {
	c, b, err := s.forCluster(shard, cluster)
	if err != nil {
		return err
	}
	err = b.do(ctx, func() error {
		ctx, cancel := context.WithTimeout(ctx, s.timeout)
		defer cancel()
		return fn(ctx, c)
	})
	if errors.Is(err, errShardUnreachable) {
		return fmt.Errorf("shard %s: %w", shard.Name, err)
	}
	return err
}

func (s *shardClients) Create(ctx context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) (*corev1alpha1.LogicalCluster, error) {
	var created *corev1alpha1.LogicalCluster
	err := s.call(ctx, shard, cluster, func(ctx context.Context, c *kcpclient.Clientset) (err error) {
		created, err = c.LogicalClusters().Create(ctx, lc, metav1.CreateOptions{})
		return err
	})
	return created, err
}

func (s *shardClients) Get(ctx context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
	var lc *corev1alpha1.LogicalCluster
	err := s.call(ctx, shard, cluster, func(ctx context.Context, c *kcpclient.Clientset) (err error) {
		lc, err = c.LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		return err
	})
	return lc, err
}

func (s *shardClients) Delete(ctx context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name, uid types.UID) error {
	return s.call(ctx, shard, cluster, func(ctx context.Context, c *kcpclient.Clientset) error {
		return c.LogicalClusters().Delete(ctx, corev1alpha1.LogicalClusterName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	})
}

// processedVersioner is an informer that tells how far its store is
// current (the shard's informers are).
type processedVersioner interface{ ProcessedResourceVersion() string }

// caughtUp tells whether an informer that has synced to resourceVersion
// synced has seen every write up to want: both are etcd revisions of the
// shard's one etcd. Anything that does not parse is not caught up.
func caughtUp(synced, want string) bool {
	s, err := strconv.ParseUint(synced, 10, 64)
	if err != nil {
		return false
	}
	w, err := strconv.ParseUint(want, 10, 64)
	return err == nil && s >= w
}
