package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// watchesPerConnection bounds the watches the bench opens over one HTTP/2
// connection (the server allows a few hundred streams per connection).
const watchesPerConnection = 200

// watchBench measures (b) write throughput and event latency in one
// logical cluster with idle watchers spread over many other clusters
// against none, (e) shard RSS per open idle watch, and (d) whether the
// shard ends any of many watches of custom resources in distinct
// (cluster, CRD) pairs held open.
func watchBench(ctx context.Context, binary string, idleWatchers, crWatches, writes int, hold time.Duration) error {
	s, err := startShard(ctx, binary)
	if err != nil {
		return err
	}
	defer s.stop()
	hot := logicalcluster.Name("hot")
	if err := createCluster(ctx, s.cfg, hot); err != nil {
		return err
	}
	others := max(idleWatchers, crWatches)
	start := time.Now()
	if err := parallel(ctx, others, 32, func(ctx context.Context, i int) error {
		return createCluster(ctx, s.cfg, clusterName(i))
	}); err != nil {
		return err
	}
	fmt.Printf("Watches: %d logical clusters created in %s\n", others, time.Since(start).Round(time.Millisecond))
	hotClient, err := s.kube.For(hot)
	if err != nil {
		return err
	}
	if err := retryNotFound(ctx, func() error { return createConfigMap(ctx, s, hot, "warmup") }); err != nil {
		return err
	}
	// Let the controllers finish with the new clusters before measuring.
	if _, err := s.settledRSS(ctx); err != nil {
		return err
	}

	// A first round warms up the cluster's serving paths; it is not kept.
	if _, err := writeAndWatch(ctx, s, hotClient, "warmup", writes); err != nil {
		return err
	}
	alone, err := writeAndWatch(ctx, s, hotClient, "alone", writes)
	if err != nil {
		return err
	}

	// Idle watchers of configmaps, one in each of the other clusters.
	rssBefore, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	runtimeBefore, err := goRuntime(ctx, s.cfg)
	if err != nil {
		return err
	}
	if err := s.saveProfile(ctx, "heap", "before-idle-watches"); err != nil {
		return err
	}
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	var ended atomic.Int64
	var wg sync.WaitGroup
	opened, err := openWatches(watchCtx, s, idleWatchers, &wg, &ended, func(ctx context.Context, cfg *rest.Config, hc *http.Client, i int) (watch.Interface, error) {
		c, err := kubernetes.NewForConfigAndClient(cfg, hc)
		if err != nil {
			return nil, err
		}
		return c.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	})
	if err != nil {
		return err
	}
	rssAfter, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	runtimeAfter, err := goRuntime(ctx, s.cfg)
	if err != nil {
		return err
	}
	if err := s.saveProfile(ctx, "heap", "idle-watches"); err != nil {
		return err
	}
	crowded, err := writeAndWatch(ctx, s, hotClient, "crowded", writes)
	if err != nil {
		return err
	}
	fmt.Printf("  %d idle watches of configmaps in %d other clusters: shard RSS %s -> %s, %.1f KiB per watch (goal <= 16 KiB)\n",
		opened, opened, mib(rssBefore), mib(rssAfter), float64(rssAfter-rssBefore)/1024/float64(max(opened, 1)))
	per := func(k string) float64 { return (runtimeAfter[k] - runtimeBefore[k]) / float64(max(opened, 1)) }
	fmt.Printf("    of which, per watch: %.2f goroutines, %.1f KiB goroutine stacks, %.1f KiB live heap (Go runtime figures)\n",
		per("go_goroutines"), per("go_memstats_stack_inuse_bytes")/1024, per("go_memstats_heap_alloc_bytes")/1024)
	fmt.Printf("  writes in one cluster (%d creates by 16 clients): %.0f/s alone, %.0f/s beside the idle watches: ratio %.2f (goal <= 1.2)\n",
		writes, alone.rate, crowded.rate, alone.rate/crowded.rate)
	fmt.Printf("  event latency in that cluster: alone p50 %s p99 %s, beside p50 %s p99 %s: ratio p99 %.2f (goal <= 1.2)\n",
		pct(alone.latency, 50), pct(alone.latency, 99), pct(crowded.latency, 50), pct(crowded.latency, 99),
		float64(pct(crowded.latency, 99))/float64(pct(alone.latency, 99)))
	stopWatches()
	wg.Wait()

	if crWatches == 0 {
		return nil
	}
	// Watches of custom resources, each in its own (cluster, CRD) pair.
	start = time.Now()
	if err := parallel(ctx, crWatches, 16, func(ctx context.Context, i int) error {
		return createWidgetCRD(ctx, s, clusterName(i))
	}); err != nil {
		return err
	}
	fmt.Printf("  %d CRDs created in %s\n", crWatches, time.Since(start).Round(time.Millisecond))
	rssBefore, err = s.settledRSS(ctx)
	if err != nil {
		return err
	}
	crCtx, stopCR := context.WithCancel(ctx)
	defer stopCR()
	ended.Store(0)
	var crWG sync.WaitGroup
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	opened, err = openWatches(crCtx, s, crWatches, &crWG, &ended, func(ctx context.Context, cfg *rest.Config, hc *http.Client, i int) (watch.Interface, error) {
		c, err := dynamic.NewForConfigAndClient(cfg, hc)
		if err != nil {
			return nil, err
		}
		var w watch.Interface
		err = retryNotFound(ctx, func() error {
			var err error
			w, err = c.Resource(gvr).Namespace("default").Watch(ctx, metav1.ListOptions{})
			return err
		})
		return w, err
	})
	if err != nil {
		return err
	}
	rssAfter, err = s.settledRSS(ctx)
	if err != nil {
		return err
	}
	time.Sleep(hold)
	fmt.Printf("  %d watches of custom resources in distinct (cluster, CRD) pairs: %d ended by the shard within %s (goal 0); shard RSS %s -> %s, %.1f KiB per watch with its serving state\n\n",
		opened, ended.Load(), hold, mib(rssBefore), mib(rssAfter), float64(rssAfter-rssBefore)/1024/float64(max(opened, 1)))
	stopCR()
	crWG.Wait()
	return nil
}

// openWatches opens n watches, watch i in clusterName(i), over
// connections of watchesPerConnection watches each, and counts in ended
// the watches the shard ends before ctx is done.
func openWatches(ctx context.Context, s *shard, n int, wg *sync.WaitGroup, ended *atomic.Int64,
	open func(ctx context.Context, cfg *rest.Config, hc *http.Client, i int) (watch.Interface, error)) (int, error) {
	var opened atomic.Int64
	err := parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		cfg, err := clusters.ConfigFor(s.cfg, clusterName(i))
		if err != nil {
			return err
		}
		hc, err := connectionFor(s.cfg, i)
		if err != nil {
			return err
		}
		w, err := open(ctx, cfg, hc, i)
		if err != nil {
			return fmt.Errorf("watch %d: %w", i, err)
		}
		opened.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok || ev.Type == watch.Error {
						if ctx.Err() == nil {
							ended.Add(1)
						}
						return
					}
				}
			}
		}()
		return nil
	})
	return int(opened.Load()), err
}

var (
	connsMu sync.Mutex
	conns   = map[int]*http.Client{}
)

// connectionFor returns the HTTP client of watch i's group: a transport,
// and so a connection, of its own for every watchesPerConnection watches.
func connectionFor(base *rest.Config, i int) (*http.Client, error) {
	connsMu.Lock()
	defer connsMu.Unlock()
	g := i / watchesPerConnection
	if c, ok := conns[g]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(base)
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext // not shared with other groups
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	conns[g] = c
	return c, nil
}

// goRuntime reads the Go runtime figures of the shard's /metrics, after a
// garbage collection has had time to run.
func goRuntime(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	out := map[string]float64{}
	for _, name := range []string{"go_goroutines", "go_memstats_stack_inuse_bytes", "go_memstats_heap_alloc_bytes"} {
		v, err := shardMetric(ctx, cfg, name)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// resetConnections forgets the connections of connectionFor: the next
// shard has another address and CA.
func resetConnections() {
	connsMu.Lock()
	defer connsMu.Unlock()
	for _, c := range conns {
		c.CloseIdleConnections()
	}
	conns = map[int]*http.Client{}
}

type writeFigures struct {
	rate    float64
	latency []time.Duration
}

// writeAndWatch creates n ConfigMaps in client's cluster with 16 clients
// and measures the rate, then creates n/4 more one at a time and measures
// how long each takes to reach a watcher of the cluster.
func writeAndWatch(ctx context.Context, s *shard, client kubernetes.Interface, prefix string, n int) (writeFigures, error) {
	var f writeFigures
	cms := client.CoreV1().ConfigMaps("default")
	start := time.Now()
	if err := parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return f, err
	}
	f.rate = float64(n) / time.Since(start).Seconds()
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: false})
	if err != nil {
		return f, err
	}
	defer w.Stop()
	// Skip the initial events of the existing ConfigMaps.
	names := map[string]bool{}
	deadline := time.After(time.Minute)
	for len(names) < n {
		select {
		case ev := <-w.ResultChan():
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
				names[cm.Name] = true
			}
		case <-deadline:
			return f, fmt.Errorf("the watch replayed %d of %d ConfigMaps", len(names), n)
		}
	}
	for i := 0; i < max(n/4, 50); i++ {
		name := fmt.Sprintf("%s-seq-%d", prefix, i)
		t := time.Now()
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			return f, err
		}
	wait:
		for {
			select {
			case ev := <-w.ResultChan():
				if cm, ok := ev.Object.(*corev1.ConfigMap); ok && cm.Name == name {
					f.latency = append(f.latency, time.Since(t))
					break wait
				}
			case <-time.After(30 * time.Second):
				return f, fmt.Errorf("no event for %s", name)
			}
		}
	}
	return f, nil
}

// createWidgetCRD creates and establishes widgets.example.com in cluster.
func createWidgetCRD(ctx context.Context, s *shard, cluster logicalcluster.Name) error {
	cfg, err := clusters.ConfigFor(s.cfg, cluster)
	if err != nil {
		return err
	}
	client, err := apiextensionsclientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}, metav1.CreateOptions{})
	return err
}
