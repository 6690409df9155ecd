package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/apiexport"
)

var cowboysGVR = schema.GroupVersionResource{Group: "wildwest.dev", Version: "v1alpha1", Resource: "cowboys"}

const (
	provider      = logicalcluster.Name("provider")
	cowboysExport = "wildwest.dev"
	bindingName   = "cowboys"
	fanoutWriters = 8
)

// apisBench measures APIs as a service on a fresh shard: one export of
// cowboys.wildwest.dev in a provider cluster; how long a consumer waits
// from creating an APIBinding until the bound resource is served, what a
// binding costs the shard in memory and goroutines, and how fast writes
// in many consumers reach one watch through the apiexport virtual
// workspace.
func apisBench(ctx context.Context, binary string, bindings, consumers, rate, defaultWS int) error {
	if bindings < 0 || consumers < 0 || rate <= 0 {
		return fmt.Errorf("apis: -bindings %d and -fanout-consumers %d must not be negative, -fanout-rate %d must be positive", bindings, consumers, rate)
	}
	s, err := startShard(ctx, binary)
	if err != nil {
		return err
	}
	defer s.stop()
	resetConnections()
	defer resetConnections()
	kcp, err := clusters.NewKCPForConfig(s.cfg)
	if err != nil {
		return err
	}
	if err := createCluster(ctx, s.cfg, provider); err != nil {
		return err
	}
	identity, err := publishCowboys(ctx, kcp)
	if err != nil {
		return err
	}
	n := max(bindings, consumers)
	start := time.Now()
	// A configmap in each consumer: what a cluster's first write starts
	// (its default namespace, service account, the clients of quota
	// admission) is not counted as the cost of its binding.
	if err := parallel(ctx, n, 32, func(ctx context.Context, i int) error {
		if err := createCluster(ctx, s.cfg, clusterName(i)); err != nil {
			return err
		}
		return retryNotFound(ctx, func() error { return createConfigMap(ctx, s, clusterName(i), "warmup") })
	}); err != nil {
		return err
	}
	fmt.Printf("APIs as a service: APIExport %s (identity %.12s...) in %s; %d consumer clusters created, with a configmap each, in %s\n",
		cowboysExport, identity, provider, n, time.Since(start).Round(time.Millisecond))

	// 1 and 3. Bindings one at a time: until Bound and until served, and
	// the shard's memory and goroutines before, after the first binding
	// (which starts what the export's resource needs once) and after all.
	bound, stopBound, err := watchBound(ctx, kcp)
	if err != nil {
		return err
	}
	defer stopBound()
	before, err := takeSnapshot(ctx, s)
	if err != nil {
		return err
	}
	if err := s.saveProfile(ctx, "heap", "before-apibindings"); err != nil {
		return err
	}
	var figs bindingFigures
	var first snapshot
	created := make([]time.Time, bindings)
	start = time.Now()
	for i := 0; i < bindings; i++ {
		t := time.Now()
		created[i] = t
		if err := createBinding(ctx, kcp, clusterName(i)); err != nil {
			return err
		}
		if err := waitServed(ctx, s.cfg, i, 5*time.Millisecond); err != nil {
			return err
		}
		figs.toServed = append(figs.toServed, time.Since(t))
		consistent, err := consistentList(ctx, s.cfg, i)
		if err != nil {
			return err
		}
		figs.consistent = append(figs.consistent, consistent)
		if i == 0 && bindings > 1 {
			if first, err = takeSnapshot(ctx, s); err != nil {
				return err
			}
			if err := s.saveProfile(ctx, "heap", "first-apibinding"); err != nil {
				return err
			}
		}
	}
	figs.dur = time.Since(start)
	// The Bound events of the last bindings may come after their lists.
	deadline := time.Now().Add(10 * time.Second)
	for bound.count() < bindings && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for i, t := range created {
		if b, ok := bound.at(clusterName(i)); ok {
			figs.toBound = append(figs.toBound, b.Sub(t))
		}
	}
	after, err := takeSnapshot(ctx, s)
	if err != nil {
		return err
	}
	stopBound()
	if err := s.saveProfile(ctx, "heap", "apibindings"); err != nil {
		return err
	}
	if bindings == 0 {
		fmt.Printf("  binding to served and memory per binding: not measured (-bindings 0)\n")
	} else {
		printBindings(bindings, figs, before, first, after)
	}

	// 2. Fan-out: every consumer bound, one watch through the virtual
	// workspace, writes in all consumers.
	if consumers > bindings {
		// Before and after, the shard is restarted: its watch caches then
		// hold the objects without the history of their recent changes,
		// which is bounded by time and cache size, not by the bindings.
		if err := s.restart(); err != nil {
			return err
		}
		before, err := takeSnapshot(ctx, s)
		if err != nil {
			return err
		}
		if err := s.saveProfile(ctx, "heap?gc=1", "before-parallel-apibindings"); err != nil {
			return err
		}
		start = time.Now()
		if err := parallel(ctx, consumers-bindings, 32, func(ctx context.Context, i int) error {
			if err := createBinding(ctx, kcp, clusterName(bindings+i)); err != nil {
				return err
			}
			return waitServed(ctx, s.cfg, bindings+i, 20*time.Millisecond)
		}); err != nil {
			return err
		}
		fmt.Printf("  fan-out: %d more bindings created by 32 clients and served in %s (%.0f/s)\n",
			consumers-bindings, time.Since(start).Round(time.Millisecond), float64(consumers-bindings)/time.Since(start).Seconds())
		after, err := takeSnapshot(ctx, s)
		if err != nil {
			return err
		}
		if err := s.saveProfile(ctx, "heap?gc=1", "parallel-apibindings"); err != nil {
			return err
		}
		if err := s.restart(); err != nil {
			return err
		}
		restarted, err := takeSnapshot(ctx, s)
		if err != nil {
			return err
		}
		if err := s.saveProfile(ctx, "heap?gc=1", "parallel-apibindings-restarted"); err != nil {
			return err
		}
		printMemoryPerBinding(consumers-bindings, before, after, restarted)
	}
	if consumers > 0 {
		if err := fanout(ctx, s, consumers, rate); err != nil {
			return err
		}
	}

	// 4. Workspaces of a type with a default binding, against plain
	// universal ones in the same shard.
	if defaultWS > 0 {
		if err := defaultBindingWorkspaces(ctx, kcp, defaultWS); err != nil {
			return err
		}
	}
	fmt.Println()
	return nil
}

// defaultBindingWorkspaces creates n universal workspaces, then n of a
// type that extends universal and binds the cowboys export by default, and
// prints both rates to Ready.
func defaultBindingWorkspaces(ctx context.Context, kcp *clusters.KCPClusterClientset, n int) error {
	wt := &tenancyv1alpha1.WorkspaceType{
		ObjectMeta: metav1.ObjectMeta{Name: "ranch"},
		Spec: tenancyv1alpha1.WorkspaceTypeSpec{
			Extend:             tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "universal", Path: "root"}}},
			DefaultAPIBindings: []tenancyv1alpha1.APIExportReference{{Path: provider.String(), Export: cowboysExport}},
		},
	}
	if _, err := kcp.Cluster(logicalcluster.Root).WorkspaceTypes().Create(ctx, wt, metav1.CreateOptions{}); err != nil {
		return err
	}
	rate := func(prefix string, typ tenancyv1alpha1.WorkspaceTypeName) (float64, error) {
		start := time.Now()
		if err := parallel(ctx, n, 32, func(ctx context.Context, i int) error {
			ws := newWorkspace(fmt.Sprintf("%s%05d", prefix, i))
			ws.Spec.Type.Name = typ
			_, err := kcp.Cluster(logicalcluster.Root).Workspaces().Create(ctx, ws, metav1.CreateOptions{})
			return err
		}); err != nil {
			return 0, err
		}
		if err := waitReady(ctx, kcp, logicalcluster.Root, prefix, n); err != nil {
			return 0, err
		}
		return float64(n) / time.Since(start).Seconds(), nil
	}
	plain, err := rate("plain-", "universal")
	if err != nil {
		return err
	}
	bound, err := rate("bound-", "ranch")
	if err != nil {
		return err
	}
	fmt.Printf("  workspaces to Ready, %d each, 32 clients: universal %.1f/s, with a default APIBinding %.1f/s (%.2fx slower; goal within 1.5x)\n",
		n, plain, bound, plain/bound)
	return nil
}

// bindingFigures are the times of the bindings created one at a time:
// from each create request until phase Bound, until the resource is
// served, and the duration of the first consistent list after that.
type bindingFigures struct {
	dur                           time.Duration
	toBound, toServed, consistent []time.Duration
}

// snapshot is the shard's RSS once settled and its Go runtime figures
// right after a garbage collection.
type snapshot struct {
	rss     int64
	runtime map[string]float64
}

func takeSnapshot(ctx context.Context, s *shard) (snapshot, error) {
	rss, err := s.settledRSS(ctx)
	if err != nil {
		return snapshot{}, err
	}
	if err := s.collectGarbage(ctx); err != nil {
		return snapshot{}, err
	}
	rt, err := goRuntime(ctx, s.cfg)
	return snapshot{rss: rss, runtime: rt}, err
}

// printBindings prints the figures of the bindings created one at a time;
// first is the snapshot after the first binding, if there were more.
func printBindings(bindings int, f bindingFigures, before, first, after snapshot) {
	fmt.Printf("  binding to served: %d APIBindings created one at a time in %s; from the create request to a list of cowboys in the consumer that succeeds (resourceVersion=0, as informers list; polled every 5 ms): p50 %s p99 %s\n",
		bindings, f.dur.Round(time.Millisecond), pct(f.toServed, 50), pct(f.toServed, 99))
	if len(f.toBound) > 0 {
		fmt.Printf("    to phase Bound (seen by a wildcard watch of APIBindings, %d of %d): p50 %s p99 %s\n", len(f.toBound), bindings, pct(f.toBound, 50), pct(f.toBound, 99))
	} else {
		fmt.Printf("    to phase Bound: no Bound binding seen by the wildcard watch of APIBindings\n")
	}
	fmt.Printf("    then the first consistent list (no resourceVersion, as kubectl get) took p50 %s p99 %s\n", pct(f.consistent, 50), pct(f.consistent, 99))
	g := func(s snapshot) float64 { return s.runtime["go_goroutines"] }
	if bindings == 1 {
		fmt.Printf("  memory: RSS %s -> %s, goroutines %.0f -> %.0f with one binding (the export's first: what its resource needs once is included)\n",
			mib(before.rss), mib(after.rss), g(before), g(after))
		return
	}
	n := float64(bindings - 1)
	per := func(k string) float64 { return (after.runtime[k] - first.runtime[k]) / n }
	fmt.Printf("  memory: the export's first binding: RSS %s -> %s, goroutines %.0f -> %.0f (what its resource needs once)\n",
		mib(before.rss), mib(first.rss), g(before), g(first))
	fmt.Printf("          the next %d: RSS %s -> %s, %.1f KiB and %.2f goroutines per binding (goroutines %.0f -> %.0f; goal: nothing started per binding, < 16 KiB each)\n",
		bindings-1, mib(first.rss), mib(after.rss), float64(after.rss-first.rss)/1024/n, per("go_goroutines"), g(first), g(after))
	fmt.Printf("          of which, per binding: %.1f KiB live heap after a forced garbage collection, %.1f KiB goroutine stacks (Go runtime figures)\n",
		per("go_memstats_heap_alloc_bytes")/1024, per("go_memstats_stack_inuse_bytes")/1024)
}

// printMemoryPerBinding prints what n bindings created together cost the
// shard (over many bindings the RSS figure rises above its noise): just
// after their creation, and after a restart of the shard.
func printMemoryPerBinding(n int, before, after, restarted snapshot) {
	d := func(s snapshot, k string) float64 { return (s.runtime[k] - before.runtime[k]) / float64(n) }
	perRSS := func(s snapshot) float64 { return float64(s.rss-before.rss) / 1024 / float64(n) }
	fmt.Printf("    memory of these %d bindings (the shard restarted before them): RSS %s -> %s, %.1f KiB per binding; live heap %.1f KiB per binding, %.2f goroutines (%.0f -> %.0f)\n",
		n, mib(before.rss), mib(after.rss), perRSS(after), d(after, "go_memstats_heap_alloc_bytes")/1024,
		d(after, "go_goroutines"), before.runtime["go_goroutines"], after.runtime["go_goroutines"])
	fmt.Printf("      after a restart of the shard: RSS %s, %.1f KiB per binding (goal < 16 KiB); live heap %.1f KiB per binding; goroutines %.0f\n",
		mib(restarted.rss), perRSS(restarted), d(restarted, "go_memstats_heap_alloc_bytes")/1024, restarted.runtime["go_goroutines"])
}

// publishCowboys creates the cowboys schema and export in the provider
// cluster and returns the export's identity once its controller sets it.
func publishCowboys(ctx context.Context, kcp *clusters.KCPClusterClientset) (string, error) {
	v := apisv1alpha1.APIResourceVersion{Name: "v1alpha1", Served: true, Storage: true,
		Subresources: apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}}
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	if err := v.SetSchema(&apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"intent": str}},
		"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"result": str}},
	}}); err != nil {
		return "", err
	}
	c := kcp.Cluster(provider)
	schemaName := "bench." + cowboysGVR.Resource + "." + cowboysGVR.Group
	if _, err := c.APIResourceSchemas().Create(ctx, &apisv1alpha1.APIResourceSchema{
		ObjectMeta: metav1.ObjectMeta{Name: schemaName},
		Spec: apisv1alpha1.APIResourceSchemaSpec{
			Group: cowboysGVR.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "cowboys", Singular: "cowboy", Kind: "Cowboy", ListKind: "CowboyList"},
			Scope: apiextensionsv1.NamespaceScoped, Versions: []apisv1alpha1.APIResourceVersion{v},
		},
	}, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("creating the APIResourceSchema: %w", err)
	}
	if _, err := c.APIExports().Create(ctx, &apisv1alpha1.APIExport{
		ObjectMeta: metav1.ObjectMeta{Name: cowboysExport},
		Spec:       apisv1alpha1.APIExportSpec{LatestResourceSchemas: []string{schemaName}},
	}, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("creating the APIExport: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		e, err := c.APIExports().Get(ctx, cowboysExport, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if e.Status.IdentityHash != "" {
			return e.Status.IdentityHash, nil
		}
		if time.Now().After(deadline) {
			return "", errors.New("the APIExport has no identity after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createBinding(ctx context.Context, kcp *clusters.KCPClusterClientset, cluster logicalcluster.Name) error {
	_, err := kcp.Cluster(cluster).APIBindings().Create(ctx, &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bindingName},
		Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
			Export: &apisv1alpha1.ExportBindingReference{Path: string(provider), Name: cowboysExport},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating the APIBinding in %s: %w", cluster, err)
	}
	return nil
}

// waitServed lists cowboys in clusterName(i) every interval until a list
// succeeds, for up to a minute. The lists ask for resourceVersion 0, as
// informers do, which the shard answers from its cache at once; a
// consistent list waits until the cache is known to be fresh.
func waitServed(ctx context.Context, cfg *rest.Config, i int, interval time.Duration) error {
	client, err := dynamicFor(cfg, i)
	if err != nil {
		return err
	}
	cowboys := client.Resource(cowboysGVR)
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := cowboys.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cowboys not served in %s a minute after its APIBinding: %w", clusterName(i), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// consistentList returns how long a list of cowboys in clusterName(i)
// without a resourceVersion takes.
func consistentList(ctx context.Context, cfg *rest.Config, i int) (time.Duration, error) {
	client, err := dynamicFor(cfg, i)
	if err != nil {
		return 0, err
	}
	t := time.Now()
	if _, err := client.Resource(cowboysGVR).List(ctx, metav1.ListOptions{}); err != nil {
		return 0, fmt.Errorf("a consistent list of cowboys in %s: %w", clusterName(i), err)
	}
	return time.Since(t), nil
}

// boundTimes records when each cluster's binding was first seen Bound.
type boundTimes struct {
	mu    sync.Mutex
	times map[logicalcluster.Name]time.Time
}

func (b *boundTimes) at(c logicalcluster.Name) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.times[c]
	return t, ok
}

func (b *boundTimes) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.times)
}

// watchBound watches APIBindings across all clusters and records when
// each cluster's binding turns Bound, until stop is called.
func watchBound(ctx context.Context, kcp *clusters.KCPClusterClientset) (*boundTimes, func(), error) {
	w, err := kcp.Wildcard().APIBindings().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("watching APIBindings across clusters: %w", err)
	}
	b := &boundTimes{times: map[logicalcluster.Name]time.Time{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			binding, ok := ev.Object.(*apisv1alpha1.APIBinding)
			if !ok || binding.Status.Phase != apisv1alpha1.APIBindingPhaseBound {
				continue
			}
			now := time.Now()
			b.mu.Lock()
			if _, seen := b.times[logicalcluster.From(binding)]; !seen {
				b.times[logicalcluster.From(binding)] = now
			}
			b.mu.Unlock()
		}
	}()
	return b, func() { w.Stop(); <-done }, nil
}

// fanout opens one watch of cowboys across all consumers through the
// apiexport virtual workspace, then creates a cowboy in each of the
// consumers clusterName(0..consumers-1) and updates each once, at rate
// writes per second from fanoutWriters clients, and measures how long each
// write takes from its response to its event on the watch.
func fanout(ctx context.Context, s *shard, consumers, rate int) error {
	vw := rest.CopyConfig(s.cfg)
	vw.Host = clusters.ShardHost(s.cfg.Host) + apiexport.URLFor(string(provider), cowboysExport) + "/clusters/" + string(logicalcluster.Wildcard)
	vwClient, err := dynamic.NewForConfig(vw)
	if err != nil {
		return err
	}
	list, err := vwClient.Resource(cowboysGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing cowboys through the virtual workspace: %w", err)
	}
	// Writes and events are matched by the resourceVersion the write
	// returned and the event carries.
	var mu sync.Mutex
	written := map[string]time.Time{} // resourceVersion -> response received
	sent := map[string]time.Time{}    // resourceVersion -> request sent
	seen := map[string]time.Time{}    // resourceVersion -> event received
	var other atomic.Int64
	// The watch starts at the list's resourceVersion, so it gets every
	// write, whenever its response begins. client-go's Watch returns once
	// the response headers arrive, which the virtual workspace sends only
	// with the first event: the watch is opened beside the writes.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var headersAt atomic.Int64 // when Watch returned, in Unix nanoseconds
	watchErr := make(chan error, 1)
	watchStart := time.Now()
	go func() {
		w, err := vwClient.Resource(cowboysGVR).Watch(watchCtx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			watchErr <- fmt.Errorf("watching cowboys through the virtual workspace: %w", err)
			return
		}
		defer w.Stop()
		headersAt.Store(time.Now().UnixNano())
		for ev := range w.ResultChan() {
			now := time.Now()
			switch ev.Type {
			case watch.Added, watch.Modified:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					mu.Lock()
					seen[u.GetResourceVersion()] = now
					mu.Unlock()
					continue
				}
			case watch.Error:
				watchErr <- fmt.Errorf("the virtual workspace watch failed: %v", ev.Object)
				return
			}
			other.Add(1)
		}
		if watchCtx.Err() == nil {
			watchErr <- errors.New("the virtual workspace watch ended")
		}
	}()

	cowboys := make([]dynamic.ResourceInterface, consumers)
	for i := range cowboys {
		c, err := dynamicFor(s.cfg, i)
		if err != nil {
			return err
		}
		cowboys[i] = c.Resource(cowboysGVR).Namespace("default")
	}
	writes := 2 * consumers
	writeCtx, stopWrites := context.WithCancel(ctx)
	defer stopWrites()
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		tick := time.NewTicker(time.Duration(float64(time.Second) / float64(rate)))
		defer tick.Stop()
		for k := 0; k < writes; k++ {
			select {
			case <-writeCtx.Done():
				return
			case <-tick.C:
			}
			select {
			case <-writeCtx.Done():
				return
			case jobs <- k:
			}
		}
	}()
	profiled := make(chan error, 1)
	go func() {
		secs := int(math.Ceil(float64(writes) / float64(rate)))
		profiled <- s.saveProfile(ctx, fmt.Sprintf("profile?seconds=%d", max(secs, 1)), "apiexport-fanout")
	}()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, fanoutWriters)
	for range fanoutWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				i := k % consumers
				t := time.Now()
				var obj *unstructured.Unstructured
				var err error
				if k < consumers {
					// The default namespace of a fresh cluster may not exist yet.
					err = retryNotFound(ctx, func() error {
						var err error
						obj, err = cowboys[i].Create(ctx, &unstructured.Unstructured{Object: map[string]any{
							"apiVersion": "wildwest.dev/v1alpha1", "kind": "Cowboy",
							"metadata": map[string]any{"name": "bench"}, "spec": map[string]any{"intent": "created"},
						}}, metav1.CreateOptions{})
						return err
					})
				} else {
					obj, err = cowboys[i].Patch(ctx, "bench", types.MergePatchType, []byte(`{"spec":{"intent":"updated"}}`), metav1.PatchOptions{})
				}
				if err != nil {
					errs <- fmt.Errorf("write %d in %s: %w", k, clusterName(i), err)
					stopWrites()
					return
				}
				now := time.Now()
				mu.Lock()
				written[obj.GetResourceVersion()], sent[obj.GetResourceVersion()] = now, t
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	writeDur := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	// Wait for the events of all writes.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		missing := 0
		for rv := range written {
			if _, ok := seen[rv]; !ok {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-watchErr:
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := <-profiled; err != nil {
		return err
	}
	mu.Lock()
	var fromResponse, fromRequest []time.Duration
	early := 0
	var last time.Time
	for rv, t := range written {
		e, ok := seen[rv]
		if !ok {
			continue
		}
		if e.After(last) {
			last = e
		}
		d := e.Sub(t)
		if d < 0 {
			early++
			d = 0
		}
		fromResponse = append(fromResponse, d)
		fromRequest = append(fromRequest, e.Sub(sent[rv]))
	}
	mu.Unlock()
	fmt.Printf("  fan-out: one watch of cowboys through the apiexport virtual workspace (/clusters/*) of %d consumers; %d writes (a create, then an update, in each) offered at %d/s by %d clients, done at %.0f/s\n",
		consumers, writes, rate, fanoutWriters, float64(writes)/writeDur.Seconds())
	if len(fromResponse) == 0 {
		fmt.Printf("    no event of the %d writes reached the watch within 30 s (%d other events)\n", writes, other.Load())
		return s.saveProfile(ctx, "heap", "apiexport-fanout")
	}
	fmt.Printf("    events of %d of %d writes received (%d other events), %.0f events/s from the first write to the last event\n",
		len(fromResponse), writes, other.Load(), float64(len(fromResponse))/last.Sub(start).Seconds())
	fmt.Printf("    write-to-event latency from the write's request: p50 %s p99 %s; from its response: p50 %s p99 %s (%d of %d events came before their write's response, counted as 0)\n",
		pct(fromRequest, 50), pct(fromRequest, 99), pct(fromResponse, 50), pct(fromResponse, 99), early, len(fromResponse))
	if h := headersAt.Load(); h != 0 {
		fmt.Printf("    the watch's response headers came %s after its request; the writes began %s after it\n",
			time.Unix(0, h).Sub(watchStart).Round(time.Millisecond), start.Sub(watchStart).Round(time.Millisecond))
	}
	return s.saveProfile(ctx, "heap", "apiexport-fanout")
}
