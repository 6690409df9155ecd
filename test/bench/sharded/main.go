// Command sharded measures a sharded installation (test/e2e/framework/
// sharded: cache server, root + 2 shards, a virtual workspaces server per
// shard, front-proxy, all separate processes) and prints its figures:
//
//   - front-proxy overhead: GET p50/p99 direct to the shard vs through the
//     proxy, as a ratio and a difference;
//   - path resolution through the proxy, cold (first request of a new
//     path three levels deep) and warm;
//   - routing lag after a delete: from the Workspace being gone on its
//     shard to the proxy no longer routing its path (p50/p99);
//   - replication lag: an APIExport changed on one shard until the cache
//     server shows it (p50/p99);
//   - workspaces/s to Ready through the proxy, all on one shard vs spread
//     over the three;
//   - the proxy's RSS after resolving N and M workspaces (flat is the
//     goal), and the idle RSS of the whole installation.
//
// Run it with `make bench` (after make build) or
// go run ./test/bench/sharded -bin bin.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/test/e2e/framework/process"
	"github.com/tessera-dev/tessera/test/e2e/framework/sharded"
)

func main() {
	bin := flag.String("bin", "bin", "directory of the built binaries")
	samples := flag.Int("samples", 1000, "GETs per latency figure")
	deletes := flag.Int("deletes", 30, "workspaces deleted for the routing lag")
	changes := flag.Int("changes", 50, "APIExport changes for the replication lag")
	rate := flag.Int("workspaces", 200, "workspaces created for each workspaces/s figure")
	rssSmall := flag.Int("rss-small", 500, "workspaces resolved before the first proxy RSS figure")
	rssLarge := flag.Int("rss-large", 2000, "workspaces resolved before the second proxy RSS figure")
	workers := flag.Int("workers", 16, "parallel clients when creating workspaces")
	flag.Parse()
	if err := run(*bin, *samples, *deletes, *changes, *rate, *rssSmall, *rssLarge, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "sharded bench:", err)
		os.Exit(1)
	}
}

type bench struct {
	in      *sharded.Installation
	proxy   *rest.Config // kcp-admin at the proxy's base URL
	shards  map[string]*rest.Config
	workers int
}

func run(bin string, samples, deletes, changes, rate, rssSmall, rssLarge, workers int) error {
	ctx := context.Background()
	binDir, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tessera-bench-sharded-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	group, err := process.NewGroup(filepath.Join(dir, "logs"), "")
	if err != nil {
		return err
	}
	defer group.StopAll(30 * time.Second)
	start := time.Now()
	in, err := sharded.Start(ctx, sharded.Options{Dir: dir, BinDir: binDir, Group: group, NoFsync: true})
	if err != nil {
		return err
	}
	fmt.Printf("sharded installation up in %s (cache, 3 shards, 3 virtual workspaces servers, front-proxy)\n", time.Since(start).Round(time.Millisecond))
	b := &bench{in: in, shards: map[string]*rest.Config{}, workers: workers}
	if b.proxy, err = loadConfig(in.Kubeconfig, "base"); err != nil {
		return err
	}
	for _, n := range sharded.ShardNames {
		if b.shards[n], err = loadConfig(in.Shard(n).Kubeconfig, "base"); err != nil {
			return err
		}
	}
	time.Sleep(5 * time.Second) // let the installation settle before its idle RSS
	fmt.Printf("idle RSS of the installation: %s (", mib(b.totalRSS()))
	for i, c := range in.Components() {
		if i > 0 {
			fmt.Print(", ")
		}
		fmt.Printf("%s %s", c.Name, mib(rss(c.Process().PID())))
	}
	fmt.Println(")")

	for _, step := range []func(context.Context) error{
		func(ctx context.Context) error { return b.proxyOverhead(ctx, samples) },
		b.resolution,
		func(ctx context.Context) error { return b.routingLag(ctx, deletes) },
		func(ctx context.Context) error { return b.replicationLag(ctx, changes) },
		func(ctx context.Context) error { return b.workspaceRate(ctx, rate) },
		func(ctx context.Context) error { return b.proxyRSS(ctx, rssSmall, rssLarge) },
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

func loadConfig(kubeconfig, context string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s context %s: %w", kubeconfig, context, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	return cfg, nil
}

func at(base *rest.Config, path string) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.Host = strings.TrimRight(base.Host, "/") + "/clusters/" + path
	return cfg
}

func (b *bench) kcp(base *rest.Config, path string) *kcpclient.Clientset {
	c, err := kcpclient.NewForConfig(at(base, path))
	if err != nil {
		panic(err)
	}
	return c
}

func (b *bench) kube(base *rest.Config, path string) *kubernetes.Clientset {
	c, err := kubernetes.NewForConfig(at(base, path))
	if err != nil {
		panic(err)
	}
	return c
}

// createWorkspace creates a workspace in parent (a path, through the
// proxy), on shard if not empty, and waits until it is Ready.
func (b *bench) createWorkspace(ctx context.Context, parent, name, shard string) (*tenancyv1alpha1.Workspace, error) {
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if shard != "" {
		ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": shard}}}
	}
	client := b.kcp(b.proxy, parent).Workspaces()
	if _, err := client.Create(ctx, ws, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating workspace %s in %s: %w", name, parent, err)
	}
	return waitReady(ctx, client, name)
}

func waitReady(ctx context.Context, client kcpclient.WorkspaceInterface, name string) (*tenancyv1alpha1.Workspace, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		ws, err := client.Get(ctx, name, metav1.GetOptions{})
		if err == nil && ws.Status.Phase == "Ready" {
			return ws, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("workspace %s not Ready: %v (last error %v)", name, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// proxyOverhead: GETs of one ConfigMap of a workspace on shard-1, direct
// and through the proxy, with the same user (kcp-admin) and keep-alive.
func (b *bench) proxyOverhead(ctx context.Context, samples int) error {
	ws, err := b.createWorkspace(ctx, "root", "overhead", "shard-1")
	if err != nil {
		return err
	}
	cluster := ws.Spec.Cluster
	if _, err := b.kube(b.shards["shard-1"], cluster).CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	measure := func(client *kubernetes.Clientset) ([]time.Duration, error) {
		var d []time.Duration
		for i := 0; i < samples+samples/10; i++ {
			t := time.Now()
			if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "probe", metav1.GetOptions{}); err != nil {
				return nil, err
			}
			if i >= samples/10 { // warm-up excluded
				d = append(d, time.Since(t))
			}
		}
		return d, nil
	}
	direct, err := measure(b.kube(b.shards["shard-1"], cluster))
	if err != nil {
		return fmt.Errorf("direct GET: %w", err)
	}
	proxied, err := measure(b.kube(b.proxy, "root:overhead"))
	if err != nil {
		return fmt.Errorf("GET through the proxy: %w", err)
	}
	// Interleave once more so that drift on a busy machine shows.
	direct2, _ := measure(b.kube(b.shards["shard-1"], cluster))
	direct = append(direct, direct2...)
	proxied2, _ := measure(b.kube(b.proxy, "root:overhead"))
	proxied = append(proxied, proxied2...)
	dp50, dp99, pp50, pp99 := pct(direct, 50), pct(direct, 99), pct(proxied, 50), pct(proxied, 99)
	fmt.Printf("front-proxy GET (%d each): direct p50 %s p99 %s; through the proxy p50 %s p99 %s; overhead p50 %s (%.2fx) p99 %s (%.2fx)\n",
		len(direct), ms(dp50), ms(dp99), ms(pp50), ms(pp99), ms(pp50-dp50), ratio(pp50, dp50), ms(pp99-dp99), ratio(pp99, dp99))
	return nil
}

// resolution: the first request through the proxy of a path three levels
// deep, each level on another shard, vs later ones.
func (b *bench) resolution(ctx context.Context) error {
	var cold, warm []time.Duration
	for i := 0; i < 10; i++ {
		a := fmt.Sprintf("res-%d", i)
		if _, err := b.createWorkspace(ctx, "root", a, "shard-1"); err != nil {
			return err
		}
		if _, err := b.createWorkspace(ctx, "root:"+a, "b", "shard-2"); err != nil {
			return err
		}
		if _, err := b.createWorkspace(ctx, "root:"+a+":b", "c", "root"); err != nil {
			return err
		}
		client := b.kube(b.proxy, "root:"+a+":b:c")
		for j := 0; j < 21; j++ {
			t := time.Now()
			if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
				return err
			}
			if j == 0 {
				cold = append(cold, time.Since(t))
			} else {
				warm = append(warm, time.Since(t))
			}
		}
	}
	fmt.Printf("path resolution through the proxy (root:a:b:c over 3 shards): cold p50 %s max %s; warm p50 %s p99 %s\n",
		ms(pct(cold, 50)), ms(pct(cold, 100)), ms(pct(warm, 50)), ms(pct(warm, 99)))
	return nil
}

// routingLag: delete a workspace; from when its Workspace is gone on the
// parent's shard until the proxy answers anything but 200 for its path.
func (b *bench) routingLag(ctx context.Context, n int) error {
	var lags []time.Duration
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("gone-%d", i)
		if _, err := b.createWorkspace(ctx, "root", name, ""); err != nil {
			return err
		}
		through := b.kube(b.proxy, "root:"+name)
		if _, err := through.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("before the delete: %w", err)
		}
		parent := b.kcp(b.shards["root"], "root").Workspaces()
		if err := parent.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		var gone time.Time
		for {
			if _, err := parent.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				gone = time.Now()
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		deadline := gone.Add(30 * time.Second)
		for {
			if _, err := through.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
				lags = append(lags, time.Since(gone))
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the proxy still routes root:%s 30s after its Workspace is gone", name)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	fmt.Printf("routing lag after a delete (%d): p50 %s p99 %s max %s\n", n, ms(pct(lags, 50)), ms(pct(lags, 99)), ms(pct(lags, 100)))
	return nil
}

// replicationLag: label an APIExport on shard-2 and time until the cache
// server's watch shows the label.
func (b *bench) replicationLag(ctx context.Context, n int) error {
	ws, err := b.createWorkspace(ctx, "root", "replicated", "shard-2")
	if err != nil {
		return err
	}
	exports := b.kcp(b.shards["shard-2"], ws.Spec.Cluster).APIExports()
	if _, err := exports.Create(ctx, &apisv1alpha1.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "lag.example.dev"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	cacheCfg, err := cacheserver.LoadConfig(filepath.Join(b.in.Dir, "cache.kubeconfig"))
	if err != nil {
		return err
	}
	cache, err := kcpclient.NewForConfig(cacheserver.ScopedConfig(cacheCfg, "shard-2", ws.Spec.Cluster))
	if err != nil {
		return err
	}
	w, err := cache.APIExports().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=lag.example.dev"})
	if err != nil {
		return err
	}
	defer w.Stop()
	var lags []time.Duration
	for i := 0; i < n; i++ {
		want := strconv.Itoa(i)
		var t time.Time
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			e, err := exports.Get(ctx, "lag.example.dev", metav1.GetOptions{})
			if err != nil {
				return err
			}
			e.Labels = map[string]string{"n": want}
			t = time.Now()
			_, err = exports.Update(ctx, e, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return err
		}
		timeout := time.After(30 * time.Second)
	wait:
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return fmt.Errorf("the cache watch ended")
				}
				if ev.Type == watch.Modified || ev.Type == watch.Added {
					if got, ok := ev.Object.(*apisv1alpha1.APIExport); ok && got.Labels["n"] == want {
						lags = append(lags, time.Since(t))
						break wait
					}
				}
			case <-timeout:
				return fmt.Errorf("change %d not in the cache after 30s", i)
			}
		}
	}
	fmt.Printf("replication lag, shard-2 -> cache server (%d changes): p50 %s p99 %s\n", n, ms(pct(lags, 50)), ms(pct(lags, 99)))
	return nil
}

// workspaceRate creates n workspaces in a workspace through the proxy,
// with workers in parallel, and waits until all are Ready.
func (b *bench) workspaceRate(ctx context.Context, n int) error {
	rates := map[string]float64{}
	for _, c := range []struct{ name, shard string }{{"one-shard", "root"}, {"three-shards", ""}} {
		if _, err := b.createWorkspace(ctx, "root", "rate-"+c.name, "root"); err != nil {
			return err
		}
		path := "root:rate-" + c.name
		t := time.Now()
		if err := parallel(ctx, n, b.workers, func(ctx context.Context, i int) error {
			ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w-%d", i)}}
			if c.shard != "" {
				ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": c.shard}}}
			}
			client := b.kcp(b.proxy, path).Workspaces()
			if _, err := client.Create(ctx, ws, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := waitReady(ctx, client, ws.Name)
			return err
		}); err != nil {
			return err
		}
		rates[c.name] = float64(n) / time.Since(t).Seconds()
	}
	fmt.Printf("workspaces to Ready through the proxy (%d, %d clients): all on one shard %.1f/s, spread over 3 shards %.1f/s (%.2fx)\n",
		n, b.workers, rates["one-shard"], rates["three-shards"], rates["three-shards"]/rates["one-shard"])
	return nil
}

// proxyRSS resolves small and then large workspaces through the proxy
// (one GET each) and reports the proxy's RSS before and after.
func (b *bench) proxyRSS(ctx context.Context, small, large int) error {
	pid := b.in.Proxy.Process().PID()
	before := rss(pid)
	var made atomic.Int64
	resolveUpTo := func(n int) error {
		from := int(made.Load())
		if err := parallel(ctx, n-from, b.workers, func(ctx context.Context, i int) error {
			name := fmt.Sprintf("rss-%d", from+i)
			ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			client := b.kcp(b.proxy, "root").Workspaces()
			if _, err := client.Create(ctx, ws, metav1.CreateOptions{}); err != nil {
				return err
			}
			if _, err := waitReady(ctx, client, name); err != nil {
				return err
			}
			_, err := b.kube(b.proxy, "root:"+name).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
			return err
		}); err != nil {
			return err
		}
		made.Store(int64(n))
		return nil
	}
	if err := resolveUpTo(small); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	atSmall := rss(pid)
	if err := resolveUpTo(large); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	atLarge := rss(pid)
	fmt.Printf("front-proxy RSS: %s before, %s after %d workspaces resolved, %s after %d (%+.1f KiB per extra workspace)\n",
		mib(before), mib(atSmall), small, mib(atLarge), large, float64(atLarge-atSmall)/1024/float64(large-small))
	fmt.Printf("installation RSS after the bench: %s\n", mib(b.totalRSS()))
	return nil
}

func (b *bench) totalRSS() int64 {
	var total int64
	for _, c := range b.in.Components() {
		total += rss(c.Process().PID())
	}
	return total
}

// rss reads VmRSS of a process in bytes.
func rss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(ctx, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return s[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/1024/1024) }
