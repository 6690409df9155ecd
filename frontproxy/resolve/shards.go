package resolve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Run reads the Shard objects of the root logical cluster, keeps them
// current with one watch, and runs one watch of Workspaces per shard until
// ctx is done.
func (r *Resolver) Run(ctx context.Context) {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	logger := klog.FromContext(ctx).WithValues("resource", "shards")
	watchLoop(klog.NewContext(ctx, logger), func(ctx context.Context) (watch.Interface, error) {
		rv, err := r.listShards(ctx)
		if err != nil {
			return nil, err
		}
		root, err := r.rootClient()
		if err != nil {
			return nil, err
		}
		return root.Shards().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}, func(ev watch.Event) {
		s, ok := ev.Object.(*corev1alpha1.Shard)
		if !ok {
			return
		}
		switch ev.Type {
		case watch.Added, watch.Modified:
			r.setShard(s.Name, s.Spec.BaseURL)
		case watch.Deleted:
			r.removeShard(s.Name)
		}
	}, func() {}, nil)
	r.mu.Lock()
	for name := range r.backends {
		r.removeShardLocked(name)
	}
	r.mu.Unlock()
}

func (r *Resolver) rootClient() (*kcpclient.Clientset, error) {
	cfg, err := clusters.ConfigFor(r.root, logicalcluster.Root)
	if err != nil {
		return nil, err
	}
	return kcpclient.NewForConfig(cfg)
}

// syncShards reads the Shard objects again.
func (r *Resolver) syncShards(ctx context.Context) error {
	_, err := r.listShards(ctx)
	return err
}

// listShards reads the Shard objects and the root shard's name, and
// returns the resourceVersion of the list.
func (r *Resolver) listShards(ctx context.Context) (string, error) {
	r.mu.Lock()
	r.lastRefresh = time.Now()
	r.mu.Unlock()
	root, err := r.rootClient()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	rootShard := r.RootShard()
	if rootShard == "" {
		lc, err := root.LogicalClusters().Get(ctx, corev1alpha1.LogicalClusterName, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("reading the root logical cluster: %w", err)
		}
		rootShard = lc.Annotations[corev1alpha1.LogicalClusterShardAnnotationKey]
		if rootShard == "" {
			rootShard = "root"
		}
	}
	list, err := root.Shards().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing shards: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rootShard = rootShard
	seen := map[string]bool{}
	for i := range list.Items {
		s := &list.Items[i]
		seen[s.Name] = true
		r.setShardLocked(s.Name, s.Spec.BaseURL)
	}
	if !seen[rootShard] {
		// A root shard without its Shard object is still reachable at the
		// address of the root kubeconfig.
		seen[rootShard] = true
		r.setShardLocked(rootShard, r.rootURL)
	}
	for name := range r.backends {
		if !seen[name] {
			r.removeShardLocked(name)
		}
	}
	r.synced = true
	return list.ResourceVersion, nil
}

func (r *Resolver) setShard(name, baseURL string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setShardLocked(name, baseURL)
}

func (r *Resolver) removeShard(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == r.rootShard {
		r.setShardLocked(name, r.rootURL)
		return
	}
	r.removeShardLocked(name)
}

// setShardLocked adds the shard or changes its address, and (re)starts the
// watch of its Workspaces.
func (r *Resolver) setShardLocked(name, baseURL string) {
	baseURL = strings.TrimSuffix(baseURL, "/")
	if old := r.backends[name]; old != nil {
		if old.baseURL == baseURL {
			return
		}
		r.removeShardLocked(name)
	}
	cfg := rest.CopyConfig(r.shards)
	cfg.Host = baseURL
	b := &backend{name: name, baseURL: baseURL, config: cfg, wake: make(chan struct{}, 1)}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		klog.Background().Error(err, "Ignoring a shard", "shard", name, "url", baseURL)
		return
	}
	b.client = client
	r.backends[name] = b
	if r.ctx != nil {
		ctx, cancel := context.WithCancel(r.ctx)
		b.cancel = cancel
		go r.watchWorkspaces(ctx, b)
	}
}

func (r *Resolver) removeShardLocked(name string) {
	b := r.backends[name]
	if b == nil {
		return
	}
	if b.cancel != nil {
		b.cancel()
	}
	delete(r.backends, name)
	r.forgetShard(name)
}

// watchWorkspaces runs the one watch of all Workspaces of a shard and
// evicts what their changes touch.
func (r *Resolver) watchWorkspaces(ctx context.Context, b *backend) {
	logger := klog.FromContext(ctx).WithValues("shard", b.name, "resource", "workspaces")
	ctx = klog.NewContext(ctx, logger)
	// rv is where the last watch got to: a watch that ends (as the shard
	// ends them after a while) goes on from there without forgetting
	// anything; one that cannot starts over.
	var rv string
	watchLoop(ctx, func(ctx context.Context) (watch.Interface, error) {
		c, err := kcpclient.NewForConfigAndClient(clusters.WildcardConfig(b.config), b.client)
		if err != nil {
			return nil, err
		}
		if rv != "" {
			if w, err := c.Workspaces().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}); err == nil {
				b.watching.Store(true)
				return w, nil
			}
		}
		// The list only gives the resourceVersion to watch from: the
		// Workspaces themselves are not kept.
		listCtx, cancel := context.WithTimeout(ctx, r.timeout)
		list, err := c.Workspaces().List(listCtx, metav1.ListOptions{Limit: 1})
		cancel()
		if err != nil {
			return nil, err
		}
		// Changes may have been missed while the watch was not running.
		r.forgetShard(b.name)
		rv = list.ResourceVersion
		w, err := c.Workspaces().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err == nil {
			b.watching.Store(true)
		}
		return w, err
	}, func(ev watch.Event) {
		if ev.Type == watch.Error {
			rv = ""
			return
		}
		ws, ok := ev.Object.(*tenancyv1alpha1.Workspace)
		if !ok {
			return
		}
		rv = ws.ResourceVersion
		if ev.Type != watch.Bookmark {
			r.invalidate(ws, ev.Type == watch.Deleted)
		}
	}, func() { b.watching.Store(false) }, b.wake)
}

// watchLoop runs watches that start returns until ctx is done, handing
// every event (errors included) to handle and starting again, with backoff, when a watch
// ends or fails.
// A signal on wake ends a backoff at once (a request to the shard just
// succeeded, so it is back).
func watchLoop(ctx context.Context, start func(context.Context) (watch.Interface, error), handle func(watch.Event), stopped func(), wake <-chan struct{}) {
	logger := klog.FromContext(ctx)
	const minDelay, maxDelay = 100 * time.Millisecond, 10 * time.Second
	delay := minDelay
	for ctx.Err() == nil {
		w, err := start(ctx)
		switch {
		case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
			logger.Error(err, "Cannot watch: the front-proxy's credentials for this shard are not a shard admin's", "retryIn", delay)
		case err != nil:
			logger.V(2).Info("Starting a watch failed", "err", err, "retryIn", delay)
		default:
			err = drain(ctx, w, handle)
			stopped()
			if err == nil {
				delay = minDelay
			}
			logger.V(4).Info("Watch ended", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		case <-wake:
		}
		if err != nil {
			delay = min(2*delay, maxDelay)
		}
	}
}

// drain hands the events of w to handle until it ends; a watch that lasted
// long enough to be worth it ends with nil.
func drain(ctx context.Context, w watch.Interface, handle func(watch.Event)) error {
	defer w.Stop()
	started := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				if time.Since(started) < time.Second {
					return errors.New("the watch ended at once")
				}
				return nil
			}
			handle(ev)
			if ev.Type == watch.Error {
				return fmt.Errorf("watch error: %v", ev.Object)
			}
		}
	}
}
