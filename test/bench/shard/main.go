// Command shard measures a shard: memory and etcd bytes per empty logical
// cluster, and GET/LIST latency in one cluster while the shard holds many
// others, against the same requests on a shard with only that cluster. It
// prints figures; it does not judge them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func main() {
	binary := flag.String("tessera", "bin/tessera", "path of the tessera binary")
	syncerBinary := flag.String("syncer", "bin/tessera-syncer", "path of the tessera-syncer binary")
	servletBinary := flag.String("servlet", "bin/tessera-servlet", "path of the tessera-servlet binary")
	servletWS := flag.Int("servlet-workspaces", 1000, "consumer workspaces bound to the Service in the servlet run")
	servletObjects := flag.Int("servlet-objects", 1000, "Zertifikate created across them in the servlet run")
	servletRate := flag.Int("servlet-rate", 50, "Zertifikate created per second in the servlet run")
	syncerWS := flag.Int("syncer-workspaces", 100, "workspaces bound to compute in the syncer run")
	syncerDeployments := flag.Int("syncer-deployments", 1000, "deployments across them whose sync latency is measured in the syncer run")
	syncerRate := flag.Int("syncer-rate", 50, "deployments created per second in the syncer run")
	syncerObjects := flag.Int("syncer-objects", 9000, "more synced objects (configmaps) for the syncer's memory in the syncer run")
	clustersN := flag.Int("clusters", 10000, "logical clusters to create")
	perCluster := flag.Int("configmaps", 10, "configmaps per cluster in the latency run")
	samples := flag.Int("samples", 2000, "requests per latency figure")
	workers := flag.Int("workers", 32, "parallel clients while filling the shard")
	suites := flag.String("suites", "startup,clusters,workspaces,fairness,watches,informers,apis,syncer,servlet", "comma-separated parts to run: startup, clusters, workspaces, fairness, watches, informers, apis, syncer, servlet")
	startups := flag.Int("startups", 5, "fresh shards started (and restarted once) in the startup run")
	idleWatchers := flag.Int("idle-watchers", 10000, "idle watches, one per other cluster, in the watches run")
	crWatches := flag.Int("cr-watches", 5000, "watches of custom resources in distinct (cluster, CRD) pairs in the watches run")
	watchWrites := flag.Int("watch-writes", 2000, "creates per write-throughput figure in the watches run")
	hold := flag.Duration("hold", time.Minute, "how long the custom-resource watches are held open")
	noisyObjects := flag.Int("noisy-objects", 5000, "configmaps the noisy cluster lists in the fairness run")
	noisyLists := flag.Int("noisy-lists", 200, "concurrent LISTs of the noisy cluster in the fairness run")
	noisyWatches := flag.Int("noisy-watches", 200, "watches of the noisy cluster in the fairness run")
	fairSamples := flag.Int("fairness-samples", 500, "GETs per figure in the fairness run")
	apf := flag.String("apf", "on", "fairness run with API Priority and Fairness: on, off or both")
	fairArgs := flag.String("fairness-shard-args", "", "extra flags of the shard in the fairness run, space-separated")
	informers := flag.Int("informers", 1000, "custom-resource informers, one per cluster, in the informers run")
	flatWS := flag.Int("workspaces", 1000, "workspaces created flat in root")
	fanout := flag.Int("fanout", 10, "children per workspace in the workspace tree")
	depth := flag.Int("depth", 3, "levels of the workspace tree")
	bindings := flag.Int("bindings", 100, "APIBindings created one at a time, one per consumer cluster, in the apis run")
	fanoutConsumers := flag.Int("fanout-consumers", 1000, "consumer clusters bound to the export whose writes reach one virtual workspace watch in the apis run")
	fanoutRate := flag.Int("fanout-rate", 200, "writes per second across the consumers in the apis run")
	defaultWS := flag.Int("default-binding-workspaces", 300, "workspaces created plain and with a default APIBinding in the apis run")
	noiseServer := flag.String("noise-server", "", "internal: run the noisy tenant of the fairness run against this cluster URL")
	noiseCA := flag.String("noise-ca", "", "internal: the CA of -noise-server")
	noiseLists := flag.Int("noise-lists", 0, "internal: LIST loops of the noisy tenant")
	noiseWatches := flag.Int("noise-watches", 0, "internal: watches of the noisy tenant")
	flag.StringVar(&profileDir, "profiles", "", "write the shard's heap profile of each scenario (and a CPU profile of the fairness run's noise) to this directory, for go tool pprof")
	flag.Parse()
	if *noiseServer != "" {
		if err := runNoise(*noiseServer, *noiseCA, *noiseLists, *noiseWatches); err != nil {
			fmt.Fprintln(os.Stderr, "bench noise:", err)
			os.Exit(1)
		}
		return
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	abs, err := filepath.Abs(*binary)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("Tessera shard benchmark on %d cores (%s/%s)\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	for _, suite := range strings.Split(*suites, ",") {
		switch strings.TrimSpace(suite) {
		case "startup":
			err = startupBench(ctx, abs, *startups)
		case "workspaces":
			err = workspaceBench(ctx, abs, *flatWS, *fanout, *depth, *workers)
		case "fairness":
			for _, on := range map[string][]bool{"on": {true}, "off": {false}, "both": {false, true}}[*apf] {
				if err = fairnessBench(ctx, abs, on, *noisyObjects, *noisyLists, *noisyWatches, *fairSamples, strings.Fields(*fairArgs)); err != nil {
					break
				}
			}
		case "watches":
			err = watchBench(ctx, abs, *idleWatchers, *crWatches, *watchWrites, *hold)
		case "informers":
			err = informerBench(ctx, abs, *informers)
		case "apis":
			err = apisBench(ctx, abs, *bindings, *fanoutConsumers, *fanoutRate, *defaultWS)
		case "syncer":
			var syncerAbs string
			if syncerAbs, err = filepath.Abs(*syncerBinary); err == nil {
				err = syncerBench(ctx, abs, syncerAbs, *syncerWS, *syncerDeployments, *syncerRate, *syncerObjects)
			}
		case "servlet":
			var servletAbs string
			if servletAbs, err = filepath.Abs(*servletBinary); err == nil {
				err = servletBench(ctx, abs, servletAbs, *servletWS, *servletObjects, *servletRate)
			}
		case "clusters":
			err = run(ctx, abs, *clustersN, *perCluster, *samples, *workers)
		default:
			err = fmt.Errorf("unknown suite %q", suite)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
}

func run(ctx context.Context, abs string, n, perCluster, samples, workers int) error {

	// 1. Memory and etcd bytes per empty logical cluster.
	big, err := startShard(ctx, abs)
	if err != nil {
		return err
	}
	defer big.stop()
	rssBefore, err := big.settledRSS(ctx)
	if err != nil {
		return err
	}
	dbBefore, err := big.etcdBytes(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := parallel(ctx, n, workers, func(ctx context.Context, i int) error {
		return createCluster(ctx, big.cfg, clusterName(i))
	}); err != nil {
		return err
	}
	createDur := time.Since(start)
	rssAfter, err := big.settledRSS(ctx)
	if err != nil {
		return err
	}
	if err := big.saveProfile(ctx, "heap", "empty-logical-clusters"); err != nil {
		return err
	}
	dbAfter, err := big.etcdBytes(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("Empty logical clusters: %d created in %s (%.0f/s)\n", n, createDur.Round(time.Millisecond), float64(n)/createDur.Seconds())
	fmt.Printf("  shard RSS:   %s -> %s: %.1f KiB per logical cluster (design target: < 64 KiB)\n",
		mib(rssBefore), mib(rssAfter), float64(rssAfter-rssBefore)/1024/float64(n))
	fmt.Printf("  etcd bytes:  %s -> %s: %.1f KiB per logical cluster (keys and values in use)\n\n",
		mib(dbBefore), mib(dbAfter), float64(dbAfter-dbBefore)/1024/float64(n))

	// 2. Fill every cluster with configmaps.
	start = time.Now()
	if err := parallel(ctx, n*perCluster, workers, func(ctx context.Context, i int) error {
		return createConfigMap(ctx, big, clusterName(i/perCluster), fmt.Sprintf("cm-%d", i%perCluster))
	}); err != nil {
		return err
	}
	fmt.Printf("Configmaps: %d across %d clusters created in %s\n", n*perCluster, n, time.Since(start).Round(time.Millisecond))
	bigGet, bigList, err := latencies(ctx, big, clusterName(n/2), samples)
	if err != nil {
		return err
	}
	if err := authorizationOverhead(ctx, big, n, samples, workers); err != nil {
		return err
	}
	big.stop()

	// 3. The same requests on a shard with one cluster.
	small, err := startShard(ctx, abs)
	if err != nil {
		return err
	}
	defer small.stop()
	if err := createCluster(ctx, small.cfg, clusterName(0)); err != nil {
		return err
	}
	// The cluster's default namespace appears shortly after the cluster.
	deadline := time.Now().Add(time.Minute)
	for i := 0; i < perCluster; i++ {
		err := createConfigMap(ctx, small, clusterName(0), fmt.Sprintf("cm-%d", i))
		for err != nil && apierrors.IsNotFound(err) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			err = createConfigMap(ctx, small, clusterName(0), fmt.Sprintf("cm-%d", i))
		}
		if err != nil {
			return err
		}
	}
	smallGet, smallList, err := latencies(ctx, small, clusterName(0), samples)
	if err != nil {
		return err
	}

	fmt.Printf("\nLatency in one cluster of %d configmaps (%d samples each, sequential):\n", perCluster, samples)
	fmt.Printf("  %-6s %-28s %-28s %s\n", "", fmt.Sprintf("shard with %d clusters", n), "shard with 1 cluster", "ratio (p50, p99)")
	row := func(what string, bigS, smallS []time.Duration) {
		bp50, bp99 := pct(bigS, 50), pct(bigS, 99)
		sp50, sp99 := pct(smallS, 50), pct(smallS, 99)
		fmt.Printf("  %-6s p50 %-8s p99 %-12s p50 %-8s p99 %-12s %.2f, %.2f\n", what, bp50, bp99, sp50, sp99,
			float64(bp50)/float64(sp50), float64(bp99)/float64(sp99))
	}
	row("GET", bigGet, smallGet)
	row("LIST", bigList, smallList)
	return nil
}

func clusterName(i int) logicalcluster.Name { return logicalcluster.Name(fmt.Sprintf("bench-%05d", i)) }

var lcGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}

func createCluster(ctx context.Context, base *rest.Config, name logicalcluster.Name) error {
	cfg, err := clusters.ConfigFor(base, name)
	if err != nil {
		return err
	}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = c.Resource(lcGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster", "metadata": map[string]any{"name": "cluster"},
	}}, metav1.CreateOptions{})
	return err
}

func createConfigMap(ctx context.Context, s *shard, cluster logicalcluster.Name, name string) error {
	c, err := s.kube.For(cluster)
	if err != nil {
		return err
	}
	_, err = c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"key": "a value of moderate length for a configmap"},
	}, metav1.CreateOptions{})
	return err
}

func latencies(ctx context.Context, s *shard, cluster logicalcluster.Name, samples int) (get, list []time.Duration, err error) {
	c, err := s.kube.For(cluster)
	if err != nil {
		return nil, nil, err
	}
	cms := c.CoreV1().ConfigMaps("default")
	for i := 0; i < 100; i++ { // warm up connections and caches
		if _, err := cms.List(ctx, metav1.ListOptions{}); err != nil {
			return nil, nil, err
		}
	}
	for i := 0; i < samples; i++ {
		t := time.Now()
		if _, err := cms.Get(ctx, "cm-3", metav1.GetOptions{}); err != nil {
			return nil, nil, err
		}
		get = append(get, time.Since(t))
		t = time.Now()
		l, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, nil, err
		}
		if len(l.Items) == 0 {
			return nil, nil, fmt.Errorf("list in %s returned nothing", cluster)
		}
		list = append(list, time.Since(t))
	}
	return get, list, nil
}

func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/1024/1024) }
