package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// singleWorkspaces is how many workspaces the latency figure creates one
// after the other.
const singleWorkspaces = 50

// workspaceBench measures workspaces on a fresh shard: how many are created
// per second until Ready, flat in root and as a tree, the memory and
// goroutines of a Ready workspace, and how long deleting the tree takes.
func workspaceBench(ctx context.Context, binary string, flat, fanout, depth, workers int) error {
	s, err := startShard(ctx, binary)
	if err != nil {
		return err
	}
	defer s.stop()
	freshStart := s.readyIn
	kcp, err := clusters.NewKCPForConfig(s.cfg)
	if err != nil {
		return err
	}
	// 0. Latency: workspaces created one after the other on an idle shard,
	// each until it is Ready.
	var single []time.Duration
	for i := 0; i < singleWorkspaces; i++ {
		t0 := time.Now()
		if _, err := createReadyWorkspace(ctx, kcp, logicalcluster.Root, fmt.Sprintf("single-%02d", i)); err != nil {
			return err
		}
		single = append(single, time.Since(t0))
	}
	// The baseline is a restarted shard, as is the last figure: the watch
	// caches then hold the objects without the history of their changes.
	if err := s.restart(); err != nil {
		return err
	}
	smallRestart := s.readyIn
	rssBefore, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	gBefore, err := goroutines(ctx, s.cfg)
	if err != nil {
		return err
	}
	heapBefore, err := s.liveHeap(ctx, "before-workspaces")
	if err != nil {
		return err
	}
	workBefore, err := s.work(ctx)
	if err != nil {
		return err
	}

	// 1. Flat: workspaces in root, created in parallel, until all are Ready;
	// the shard's CPU profile covers the first seconds of it.
	profiled := make(chan error, 1)
	go func() { profiled <- s.saveProfile(ctx, "profile?seconds=8", "workspaces-flat") }()
	start := time.Now()
	if err := parallel(ctx, flat, workers, func(ctx context.Context, i int) error {
		return createWorkspace(ctx, kcp, logicalcluster.Root, fmt.Sprintf("flat-%05d", i))
	}); err != nil {
		return err
	}
	if err := waitReady(ctx, kcp, logicalcluster.Root, "flat-", flat); err != nil {
		return err
	}
	flatDur := time.Since(start)
	workAfter, err := s.work(ctx)
	if err != nil {
		return err
	}
	if err := <-profiled; err != nil {
		return err
	}
	rssAfter, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	gAfter, err := goroutines(ctx, s.cfg)
	if err != nil {
		return err
	}
	heapAfter, err := s.liveHeap(ctx, "workspaces-flat")
	if err != nil {
		return err
	}
	// The same workspaces after a restart of the shard: what they cost
	// without the watch caches' history of recent changes (bounded by the
	// cache sizes, not by the number of workspaces).
	if err := s.restart(); err != nil {
		return err
	}
	flatRestart := s.readyIn
	rssRestarted, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	heapRestarted, err := s.liveHeap(ctx, "workspaces-flat-restarted")
	if err != nil {
		return err
	}

	// 2. Tree: fanout children per workspace, depth levels; a workspace's
	// children are created as soon as it is Ready.
	type node struct {
		parent logicalcluster.Name
		name   string
		level  int
	}
	total := 0
	for l, n := 1, fanout; l <= depth; l, n = l+1, n*fanout {
		total += n
	}
	start = time.Now()
	queue := make(chan node, total)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for i := 0; i < fanout; i++ {
		wg.Add(1)
		queue <- node{parent: logicalcluster.Root, name: fmt.Sprintf("tree-%02d", i), level: 1}
	}
	go func() { wg.Wait(); close(queue) }()
	var workersWG sync.WaitGroup
	for w := 0; w < workers; w++ {
		workersWG.Add(1)
		go func() {
			defer workersWG.Done()
			for n := range queue {
				cluster, err := createReadyWorkspace(ctx, kcp, n.parent, n.name)
				if err != nil {
					select {
					case errs <- fmt.Errorf("workspace %s in %s: %w", n.name, n.parent, err):
					default:
					}
				} else if n.level < depth {
					for i := 0; i < fanout; i++ {
						wg.Add(1)
						queue <- node{parent: cluster, name: fmt.Sprintf("n-%02d", i), level: n.level + 1}
					}
				}
				wg.Done()
			}
		}()
	}
	workersWG.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	treeDur := time.Since(start)
	rssTree, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	if err := s.saveProfile(ctx, "heap", "workspaces"); err != nil {
		return err
	}
	gTree, err := goroutines(ctx, s.cfg)
	if err != nil {
		return err
	}

	// 3. Deleting the tree: its top-level workspaces go when everything
	// below them is gone.
	deleteBefore, err := s.work(ctx)
	if err != nil {
		return err
	}
	go func() { profiled <- s.saveProfile(ctx, "profile?seconds=8", "workspaces-delete") }()
	start = time.Now()
	root := kcp.Cluster(logicalcluster.Root).Workspaces()
	for i := 0; i < fanout; i++ {
		if err := root.Delete(ctx, fmt.Sprintf("tree-%02d", i), metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	if err := waitGone(ctx, kcp, logicalcluster.Root, "tree-"); err != nil {
		return err
	}
	deleteDur := time.Since(start)
	if err := <-profiled; err != nil {
		return err
	}
	deleteAfter, err := s.work(ctx)
	if err != nil {
		return err
	}

	fmt.Printf("Workspaces (type root:universal) on one shard, %d parallel clients:\n", workers)
	fmt.Printf("  start:  exec to /readyz 200 with an empty data dir %s (goal 0.5 s; kcp 26-29 s); restarts: with %d workspaces %s, with %d %s\n",
		freshStart.Round(time.Millisecond), singleWorkspaces, smallRestart.Round(time.Millisecond), singleWorkspaces+flat, flatRestart.Round(time.Millisecond))
	fmt.Printf("  idle:   RSS %s, %d goroutines, live heap %s with %d workspaces (goal 64 MiB; kcp 517-546 MB)\n",
		mib(rssBefore), gBefore, mib(int64(heapBefore)), singleWorkspaces)
	fmt.Printf("  one:    %d created one after the other, create -> Ready p50 %s, p99 %s\n", singleWorkspaces,
		pct(single, 50).Round(100*time.Microsecond), pct(single, 99).Round(100*time.Microsecond))
	fmt.Printf("  flat:   %d in root Ready in %s: %.1f workspaces/s\n", flat, flatDur.Round(time.Millisecond), float64(flat)/flatDur.Seconds())
	fmt.Print(workAfter.per(workBefore, flat, "workspace"))
	fmt.Printf("  tree:   %d (fan-out %d, depth %d) Ready in %s: %.1f workspaces/s\n", total, fanout, depth, treeDur.Round(time.Millisecond), float64(total)/treeDur.Seconds())
	fmt.Printf("  delete: the tree of %d deleted in %s (%.1f workspaces/s)\n", total, deleteDur.Round(time.Millisecond), float64(total)/deleteDur.Seconds())
	fmt.Print(deleteAfter.per(deleteBefore, total, "deleted workspace"))
	perWS := float64(rssAfter-rssBefore) / float64(flat)
	gPerWS := float64(gAfter-gBefore) / float64(flat)
	fmt.Printf("  memory: RSS %s -> %s with %d Ready workspaces: %.1f KiB and %.2f goroutines per workspace (goroutines %d -> %d)\n",
		mib(rssBefore), mib(rssAfter), flat, perWS/1024, gPerWS, gBefore, gAfter)
	fmt.Printf("          live heap after a forced garbage collection %s -> %s: %.1f KiB per workspace (RSS includes the heap's slack)\n",
		mib(int64(heapBefore)), mib(int64(heapAfter)), (heapAfter-heapBefore)/1024/float64(flat))
	fmt.Printf("          after a restart of the shard (no watch-cache history): RSS %s, %.1f KiB per workspace; live heap %s, %.1f KiB per workspace\n",
		mib(rssRestarted), float64(rssRestarted-rssBefore)/1024/float64(flat), mib(int64(heapRestarted)), (heapRestarted-heapBefore)/1024/float64(flat))
	fmt.Printf("          marginal, %d -> %d workspaces (bounded client caches already full): RSS %s -> %s, %.1f KiB per workspace, goroutines %d -> %d\n",
		flat, flat+total, mib(rssAfter), mib(rssTree), float64(rssTree-rssAfter)/1024/float64(total), gAfter, gTree)
	fmt.Printf("  kcp v0.32.3 built from source on a machine like this one: 2.3 workspaces/s flat (1,000 under root), 3.4 MiB and 24 goroutines per workspace\n")
	fmt.Printf("  kcp's published load test: 8/s in a tree, 2/s flat, ~1 h to delete 10,000, 7.4-9.8 MiB per empty workspace\n")
	fmt.Printf("  ratios (Tessera/kcp): flat %.0fx faster; memory per workspace %.4f of kcp's 3.4 MiB\n\n",
		float64(flat)/flatDur.Seconds()/2.3, perWS/(3.4*1024*1024))
	return nil
}

func newWorkspace(name string) *tenancyv1alpha1.Workspace {
	return &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: "root"}},
	}
}

func createWorkspace(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, name string) error {
	_, err := kcp.Cluster(parent).Workspaces().Create(ctx, newWorkspace(name), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// createReadyWorkspace creates a workspace and returns its logical cluster
// once it is Ready, which a watch of the one workspace reports as soon as
// it happens.
func createReadyWorkspace(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, name string) (logicalcluster.Name, error) {
	client := kcp.Cluster(parent).Workspaces()
	ws, err := client.Create(ctx, newWorkspace(name), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		ws, err = client.Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for ws.Status.Phase != corev1alpha1.LogicalClusterPhaseReady {
		w, err := client.Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: ws.ResourceVersion,
		})
		if err != nil {
			return "", fmt.Errorf("watching: %w (phase %q)", err, ws.Status.Phase)
		}
		for ev := range w.ResultChan() {
			if o, ok := ev.Object.(*tenancyv1alpha1.Workspace); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				ws = o
				if ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
					break
				}
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return "", fmt.Errorf("not Ready after 2 minutes (phase %q)", ws.Status.Phase)
		}
	}
	return logicalcluster.Name(ws.Spec.Cluster), nil
}

// waitReady waits until n workspaces with prefix in parent are Ready.
func waitReady(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, prefix string, n int) error {
	return waitWorkspaces(ctx, kcp, parent, 10*time.Minute, func(ws map[string]*tenancyv1alpha1.Workspace) (bool, string) {
		ready := 0
		for name, w := range ws {
			if strings.HasPrefix(name, prefix) && w.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
				ready++
			}
		}
		return ready >= n, fmt.Sprintf("%d of %d workspaces Ready", ready, n)
	})
}

// waitGone waits until no workspace with prefix is left in parent.
func waitGone(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, prefix string) error {
	return waitWorkspaces(ctx, kcp, parent, 30*time.Minute, func(ws map[string]*tenancyv1alpha1.Workspace) (bool, string) {
		left := 0
		for name := range ws {
			if strings.HasPrefix(name, prefix) {
				left++
			}
		}
		return left == 0, fmt.Sprintf("%d workspaces left", left)
	})
}

// waitWorkspaces lists the workspaces of parent and follows them with a
// watch until done says so: a watch costs the shard far less than polling
// lists of thousands of workspaces, which would compete with what is
// measured.
func waitWorkspaces(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, timeout time.Duration,
	done func(map[string]*tenancyv1alpha1.Workspace) (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := kcp.Cluster(parent).Workspaces()
	last := ""
	for {
		l, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("after %s: %s", timeout, last)
			}
			return err
		}
		ws := make(map[string]*tenancyv1alpha1.Workspace, len(l.Items))
		for i := range l.Items {
			ws[l.Items[i].Name] = &l.Items[i]
		}
		var ok bool
		if ok, last = done(ws); ok {
			return nil
		}
		w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, AllowWatchBookmarks: true})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("after %s: %s", timeout, last)
			}
			return err
		}
		for ev := range w.ResultChan() {
			o, isWS := ev.Object.(*tenancyv1alpha1.Workspace)
			if !isWS {
				continue // bookmarks and errors: a closed watch lists again
			}
			switch ev.Type {
			case watch.Deleted:
				delete(ws, o.Name)
			case watch.Added, watch.Modified:
				ws[o.Name] = o
			default:
				continue
			}
			if ok, last = done(ws); ok {
				w.Stop()
				return nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return fmt.Errorf("after %s: %s", timeout, last)
		}
	}
}

// goroutines reads go_goroutines from the shard's /metrics.
func goroutines(ctx context.Context, cfg *rest.Config) (int, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("no go_goroutines in /metrics (HTTP %d)", resp.StatusCode)
}
