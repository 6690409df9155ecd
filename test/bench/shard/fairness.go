package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// fairnessBench measures GET latency in a quiet logical cluster while a
// noisy one runs many concurrent LISTs of many objects and watches,
// against the same GETs with no neighbour, on one shard. The same
// non-admin user works in both clusters, so only the logical cluster
// tells their flows apart. apf passes --enable-priority-and-fairness.
func fairnessBench(ctx context.Context, binary string, apf bool, objects, lists, watches, samples int, shardArgs []string) error {
	// Lists cost seats by the objects of their cluster, counted every scan
	// interval (1m by default): count soon after the noisy cluster fills.
	s, err := startShard(ctx, binary, append([]string{fmt.Sprintf("--enable-priority-and-fairness=%t", apf), "--logical-cluster-object-count-scan-interval=10s"}, shardArgs...)...)
	if err != nil {
		return err
	}
	defer s.stop()
	noisy, quiet := logicalcluster.Name("noisy"), logicalcluster.Name("quiet")
	for _, c := range []logicalcluster.Name{noisy, quiet} {
		if err := createCluster(ctx, s.cfg, c); err != nil {
			return err
		}
		if err := grantBenchUser(ctx, s, c); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := parallel(ctx, objects, 32, func(ctx context.Context, i int) error {
		return retryNotFound(ctx, func() error { return createConfigMap(ctx, s, noisy, fmt.Sprintf("cm-%d", i)) })
	}); err != nil {
		return err
	}
	for i := 0; i < 10; i++ {
		if err := retryNotFound(ctx, func() error { return createConfigMap(ctx, s, quiet, fmt.Sprintf("cm-%d", i)) }); err != nil {
			return err
		}
	}
	fmt.Printf("Fair sharing (API Priority and Fairness %s, shard flags %v): %d configmaps in the noisy cluster created in %s\n",
		map[bool]string{true: "on", false: "off"}[apf], shardArgs, objects, time.Since(start).Round(time.Millisecond))

	// Each tenant has its own connections, as two tenants' clients would:
	// over one HTTP/2 connection the quiet GETs would queue behind the
	// noisy LIST responses in the client, not in the shard.
	tenantClient := func(cluster logicalcluster.Name) (kubernetes.Interface, error) {
		cfg, err := clusters.ConfigFor(s.cfg, cluster)
		if err != nil {
			return nil, err
		}
		cfg = rest.CopyConfig(cfg)
		cfg.BearerToken, cfg.CertData, cfg.KeyData, cfg.CertFile, cfg.KeyFile = benchUserToken, nil, nil, "", ""
		cfg.QPS, cfg.Burst = -1, 0
		cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext // a transport of its own
		return kubernetes.NewForConfig(cfg)
	}
	quietClient, err := tenantClient(quiet)
	if err != nil {
		return err
	}
	noisyClient, err := tenantClient(noisy)
	if err != nil {
		return err
	}
	// The bindings reach the shard's authorizer through its informers.
	for _, c := range []kubernetes.Interface{quietClient, noisyClient} {
		deadline := time.Now().Add(time.Minute)
		for {
			_, err := c.CoreV1().ConfigMaps("default").Get(ctx, "cm-3", metav1.GetOptions{})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the bench user is not let in: %w", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	gets := func() ([]time.Duration, error) {
		var out []time.Duration
		for i := 0; i < samples; i++ {
			t := time.Now()
			if _, err := quietClient.CoreV1().ConfigMaps("default").Get(ctx, "cm-3", metav1.GetOptions{}); err != nil {
				return nil, err
			}
			out = append(out, time.Since(t))
		}
		return out, nil
	}
	if _, err := gets(); err != nil { // warm up
		return err
	}
	time.Sleep(10 * time.Second) // a scan counts the noisy cluster's objects
	alone, err := gets()
	if err != nil {
		return err
	}

	noiseCtx, stopNoise := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var served, throttled, failed atomic.Int64
	for i := 0; i < lists; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for noiseCtx.Err() == nil {
				_, err := noisyClient.CoreV1().ConfigMaps("default").List(noiseCtx, metav1.ListOptions{})
				switch {
				case err == nil:
					served.Add(1)
				case apierrors.IsTooManyRequests(err):
					throttled.Add(1)
				case noiseCtx.Err() == nil:
					failed.Add(1)
				}
			}
		}()
	}
	for i := 0; i < watches; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := noisyClient.CoreV1().ConfigMaps("default").Watch(noiseCtx, metav1.ListOptions{})
			if err != nil {
				return
			}
			defer w.Stop()
			for range w.ResultChan() {
			}
		}()
	}
	time.Sleep(2 * time.Second) // let the noise build up
	noiseStart := time.Now()
	crowded, err := gets()
	noiseDur := time.Since(noiseStart)
	stopNoise()
	wg.Wait()
	if err != nil {
		return err
	}
	fmt.Printf("  GET in the quiet cluster (%d samples): alone p50 %s p99 %s; beside %d LISTs of %d objects and %d watches p50 %s p99 %s\n",
		samples, pct(alone, 50), pct(alone, 99), lists, objects, watches, pct(crowded, 50), pct(crowded, 99))
	fmt.Printf("  noisy cluster meanwhile: %d LISTs served (%.0f/s), %d throttled (429), %d failed\n",
		served.Load(), float64(served.Load())/noiseDur.Seconds(), throttled.Load(), failed.Load())
	fmt.Printf("  ratio GET p99 with/without the noisy neighbour: %.2f (goal <= 2)\n\n", float64(pct(crowded, 99))/float64(pct(alone, 99)))
	return nil
}

// grantBenchUser lets the bench user into cluster and lets it read and
// write everything there.
func grantBenchUser(ctx context.Context, s *shard, cluster logicalcluster.Name) error {
	c, err := s.kube.For(cluster)
	if err != nil {
		return err
	}
	for _, role := range []string{"system:kcp:workspace:access", "cluster-admin"} {
		if err := retryNotFound(ctx, func() error {
			_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "bench-" + role},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: benchUser}},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			}, metav1.CreateOptions{})
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// retryNotFound retries f while it fails with NotFound (a cluster's
// default namespace appears shortly after the cluster) for up to a minute.
func retryNotFound(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := f()
		if err == nil || !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
