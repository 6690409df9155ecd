package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// informerBench measures (c): what n informers of a custom resource, one in
// each of n logical clusters with its own CRD, cost etcd while they do
// their initial list and start watching; with the shard's watch caches
// (the default) and, for comparison, without (--watch-cache=false).
func informerBench(ctx context.Context, binary string, n int) error {
	for _, cached := range []bool{true, false} {
		var args []string
		name := "with the shared custom-resource watch cache"
		if !cached {
			args = []string{"--watch-cache=false"}
			name = "without watch caches (--watch-cache=false)"
		}
		if err := informersOnce(ctx, binary, n, name, args); err != nil {
			return err
		}
	}
	fmt.Println()
	return nil
}

func informersOnce(ctx context.Context, binary string, n int, name string, args []string) error {
	s, err := startShard(ctx, binary, args...)
	if err != nil {
		return err
	}
	defer s.stop()
	resetConnections()
	defer resetConnections()
	start := time.Now()
	if err := parallel(ctx, n, 32, func(ctx context.Context, i int) error {
		if err := createCluster(ctx, s.cfg, clusterName(i)); err != nil {
			return err
		}
		if err := createWidgetCRD(ctx, s, clusterName(i)); err != nil {
			return err
		}
		return retryNotFound(ctx, func() error {
			client, err := dynamicFor(s.cfg, i)
			if err != nil {
				return err
			}
			_, err = client.Resource(widgetsGVR).Namespace("default").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w"},
				"spec":     map[string]any{"cluster": string(clusterName(i))},
			}}, metav1.CreateOptions{})
			return err
		})
	}); err != nil {
		return err
	}
	if _, err := s.settledRSS(ctx); err != nil {
		return err
	}
	fmt.Printf("Informers, %s: %d logical clusters with a CRD and a widget each, created in %s\n", name, n, time.Since(start).Round(time.Millisecond))

	watchersBefore := etcdMetric("etcd_debugging_mvcc_watcher_total")
	requestsBefore, err := shardMetricBy(ctx, s.cfg, "etcd_requests_total", "operation", `resource="widgets"`)
	if err != nil {
		return err
	}
	listsBefore, err := shardMetric(ctx, s.cfg, "etcd_requests_total", `resource="widgets"`, `operation="list`)
	if err != nil {
		return err
	}
	informerCtx, stop := context.WithCancel(ctx)
	defer stop()
	synced := make([]cache.InformerSynced, n)
	var wrong sync.Map
	start = time.Now()
	for i := range n {
		client, err := dynamicFor(s.cfg, i)
		if err != nil {
			return err
		}
		widgets := client.Resource(widgetsGVR).Namespace(metav1.NamespaceAll)
		inf := cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return widgets.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return widgets.Watch(ctx, o)
			},
		}, &unstructured.Unstructured{}, 0, cache.Indexers{})
		own := string(clusterName(i))
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if u, ok := obj.(*unstructured.Unstructured); ok && u.GetAnnotations()["kcp.io/cluster"] != own {
				wrong.Store(own, u.GetAnnotations()["kcp.io/cluster"])
			}
		}}); err != nil {
			return err
		}
		synced[i] = inf.HasSynced
		go inf.RunWithContext(informerCtx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	syncedIn := time.Since(start)
	// Let the informers' watches start after their lists.
	time.Sleep(3 * time.Second)
	if err := s.saveProfile(ctx, "heap", "informers-"+strings.Fields(name)[0]+"-cache"); err != nil {
		return err
	}
	watchers := etcdMetric("etcd_debugging_mvcc_watcher_total") - watchersBefore
	requestsAfter, err := shardMetricBy(ctx, s.cfg, "etcd_requests_total", "operation", `resource="widgets"`)
	if err != nil {
		return err
	}
	listsAfter, err := shardMetric(ctx, s.cfg, "etcd_requests_total", `resource="widgets"`, `operation="list`)
	if err != nil {
		return err
	}
	var requests float64
	var ops []string
	for op, v := range requestsAfter {
		if d := v - requestsBefore[op]; d > 0 {
			requests += d
			ops = append(ops, fmt.Sprintf("%s %.0f", op, d))
		}
	}
	sort.Strings(ops)
	bad := 0
	wrong.Range(func(k, v any) bool { bad++; return true })
	fmt.Printf("  %d informers synced in %s; etcd watchers +%.0f (%.2f per informer), etcd lists of widgets +%.0f (%.2f per informer; goal: no per-informer etcd list or watch); all etcd requests for widgets: %s; informers that saw another cluster's widget: %d\n",
		n, syncedIn.Round(time.Millisecond), watchers, watchers/float64(n), listsAfter-listsBefore, (listsAfter-listsBefore)/float64(n), strings.Join(ops, ", "), bad)
	stop()
	return nil
}

// dynamicFor returns a dynamic client of clusterName(i), sharing the
// connections of openWatches.
func dynamicFor(base *rest.Config, i int) (*dynamic.DynamicClient, error) {
	cfg, err := clusters.ConfigFor(base, clusterName(i))
	if err != nil {
		return nil, err
	}
	hc, err := connectionFor(base, i)
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfigAndClient(cfg, hc)
}

// etcdMetric sums a metric of the embedded etcd of the bench process.
func etcdMetric(name string) float64 {
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return -1
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			}
		}
	}
	return sum
}

// shardMetric sums the samples of a metric of the shard's /metrics whose
// labels contain every one of the given substrings.
func shardMetric(ctx context.Context, cfg *rest.Config, name string, labels ...string) (float64, error) {
	by, err := shardMetricBy(ctx, cfg, name, "", labels...)
	return by[""], err
}

// shardMetricBy is shardMetric by the value of one label ("" sums all).
func shardMetricBy(ctx context.Context, cfg *rest.Config, name, label string, labels ...string) (map[string]float64, error) {
	var by []string
	if label != "" {
		by = []string{label}
	}
	return shardMetricByLabels(ctx, cfg, name, by, labels...)
}

// shardMetricByLabels is shardMetric by the values of the labels by,
// joined with spaces (none: one sum under "").
func shardMetricByLabels(ctx context.Context, cfg *rest.Config, name string, by []string, labels ...string) (map[string]float64, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: HTTP %d", resp.StatusCode)
	}
	sums := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			if rest, ok = strings.CutPrefix(line, name+" "); !ok {
				continue
			}
			rest = " " + rest
		}
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				continue lines
			}
		}
		i := strings.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(rest[i+1:], 64)
		if err != nil {
			return nil, err
		}
		var values []string
		for _, label := range by {
			value := ""
			// A label starts the set or follows a comma: resource is not
			// the end of subresource.
			if _, after, ok := strings.Cut(","+rest, ","+label+`="`); ok {
				value, _, _ = strings.Cut(after, `"`)
			}
			values = append(values, value)
		}
		sums[strings.TrimSpace(strings.Join(values, " "))] += v
	}
	return sums, sc.Err()
}
