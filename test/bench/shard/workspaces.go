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
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// workspaceBench measures workspaces on a fresh shard: how many are created
// per second until Ready, flat in root and as a tree, the memory and
// goroutines of a Ready workspace, and how long deleting the tree takes.
func workspaceBench(ctx context.Context, binary string, flat, fanout, depth, workers int) error {
	s, err := startShard(ctx, binary)
	if err != nil {
		return err
	}
	defer s.stop()
	kcp, err := clusters.NewKCPForConfig(s.cfg)
	if err != nil {
		return err
	}
	rssBefore, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	gBefore, err := goroutines(ctx, s.cfg)
	if err != nil {
		return err
	}

	// 1. Flat: workspaces in root, created in parallel, until all are Ready.
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
	rssAfter, err := s.settledRSS(ctx)
	if err != nil {
		return err
	}
	gAfter, err := goroutines(ctx, s.cfg)
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

	fmt.Printf("Workspaces (type root:universal) on one shard, %d parallel clients:\n", workers)
	fmt.Printf("  flat:   %d in root Ready in %s: %.1f workspaces/s\n", flat, flatDur.Round(time.Millisecond), float64(flat)/flatDur.Seconds())
	fmt.Printf("  tree:   %d (fan-out %d, depth %d) Ready in %s: %.1f workspaces/s\n", total, fanout, depth, treeDur.Round(time.Millisecond), float64(total)/treeDur.Seconds())
	fmt.Printf("  delete: the tree of %d deleted in %s (%.1f workspaces/s)\n", total, deleteDur.Round(time.Millisecond), float64(total)/deleteDur.Seconds())
	perWS := float64(rssAfter-rssBefore) / float64(flat)
	gPerWS := float64(gAfter-gBefore) / float64(flat)
	fmt.Printf("  memory: RSS %s -> %s with %d Ready workspaces: %.1f KiB and %.2f goroutines per workspace (goroutines %d -> %d)\n",
		mib(rssBefore), mib(rssAfter), flat, perWS/1024, gPerWS, gBefore, gAfter)
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
// once it is Ready.
func createReadyWorkspace(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, name string) (logicalcluster.Name, error) {
	if err := createWorkspace(ctx, kcp, parent, name); err != nil {
		return "", err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		ws, err := kcp.Cluster(parent).Workspaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
			return logicalcluster.Name(ws.Spec.Cluster), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("not Ready after 2 minutes (phase %q)", ws.Status.Phase)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(delay):
		}
	}
}

// waitReady waits until n workspaces with prefix in parent are Ready.
func waitReady(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, prefix string, n int) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		l, err := kcp.Cluster(parent).Workspaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, ws := range l.Items {
			if strings.HasPrefix(ws.Name, prefix) && ws.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
				ready++
			}
		}
		if ready >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d workspaces Ready after 10 minutes", ready, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGone waits until no workspace with prefix is left in parent.
func waitGone(ctx context.Context, kcp *clusters.KCPClusterClientset, parent logicalcluster.Name, prefix string) error {
	deadline := time.Now().Add(30 * time.Minute)
	for {
		l, err := kcp.Cluster(parent).Workspaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		left := 0
		for _, ws := range l.Items {
			if strings.HasPrefix(ws.Name, prefix) {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d workspaces left after 30 minutes", left)
		}
		time.Sleep(100 * time.Millisecond)
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
