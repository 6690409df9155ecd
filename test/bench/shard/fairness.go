package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

	// The noisy tenant's clients run in a process of their own, as
	// another tenant's would: in this process their goroutines would
	// hold the Go scheduler's processors while decoding lists, and the
	// quiet GETs would wait for them here rather than in the shard.
	noise, err := startNoise(ctx, s, noisy, lists, watches)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let the noise build up
	profiled := make(chan error, 1)
	go func() { profiled <- s.saveProfile(ctx, "profile?seconds=5", fmt.Sprintf("fairness-apf-%t", apf)) }()
	noiseStart := time.Now()
	crowded, err := gets()
	noiseDur := time.Since(noiseStart)
	if perr := <-profiled; perr != nil && err == nil {
		err = perr
	}
	counts, stopErr := noise.stop()
	if err != nil {
		return err
	}
	if stopErr != nil {
		return stopErr
	}
	served, throttled, failed := counts[0], counts[1], counts[2]
	fmt.Printf("  GET in the quiet cluster (%d samples): alone p50 %s p99 %s; beside %d LISTs of %d objects and %d watches p50 %s p99 %s\n",
		samples, pct(alone, 50), pct(alone, 99), lists, objects, watches, pct(crowded, 50), pct(crowded, 99))
	fmt.Printf("  noisy cluster meanwhile: %d LISTs served (%.0f/s), %d throttled (429), %d failed\n",
		served, float64(served)/noiseDur.Seconds(), throttled, failed)
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

// noiseProcess is a child process running the noisy tenant's clients.
type noiseProcess struct {
	cmd *exec.Cmd
	out *bytes.Buffer
	in  io.WriteCloser
}

// startNoise starts this program again in noise mode against cluster: lists
// concurrent LIST loops and watches watches of its configmaps, as the
// bench user.
func startNoise(ctx context.Context, s *shard, cluster logicalcluster.Name, lists, watches int) (*noiseProcess, error) {
	cfg, err := clusters.ConfigFor(s.cfg, cluster)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, self, "-noise-server", cfg.Host, "-noise-ca", string(ca),
		"-noise-lists", strconv.Itoa(lists), "-noise-watches", strconv.Itoa(watches))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &noiseProcess{cmd: cmd, out: out, in: in}, nil
}

// stop ends the noise (closing its stdin) and returns the LISTs it had
// served, throttled and failed.
func (n *noiseProcess) stop() ([3]int64, error) {
	var counts [3]int64
	_ = n.in.Close()
	if err := n.cmd.Wait(); err != nil {
		return counts, fmt.Errorf("noise process: %w: %s", err, n.out.String())
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(n.out.String()), "%d %d %d", &counts[0], &counts[1], &counts[2]); err != nil {
		return counts, fmt.Errorf("noise process output %q: %w", n.out.String(), err)
	}
	return counts, nil
}

// runNoise is noise mode: LIST loops and watches of the configmaps of
// server (a cluster URL) as the bench user until stdin closes, then the
// counts of LISTs served, throttled and failed on stdout.
func runNoise(server, ca string, lists, watches int) error {
	cfg := &rest.Config{Host: server, BearerToken: benchUserToken, QPS: -1, TLSClientConfig: rest.TLSClientConfig{CAData: []byte(ca)}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	var wg sync.WaitGroup
	var served, throttled, failed atomic.Int64
	for range lists {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, err := client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
				switch {
				case err == nil:
					served.Add(1)
				case apierrors.IsTooManyRequests(err):
					throttled.Add(1)
				case ctx.Err() == nil:
					failed.Add(1)
				}
			}
		}()
	}
	for range watches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := client.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
			if err != nil {
				return
			}
			defer w.Stop()
			for range w.ResultChan() {
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%d %d %d\n", served.Load(), throttled.Load(), failed.Load())
	return nil
}
