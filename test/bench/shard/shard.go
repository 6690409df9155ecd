package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/shard/etcd"
)

// shard is a tessera process with an etcd of its own (run in this process,
// so the shard's memory is measured without etcd's).
type shard struct {
	dir     string
	cmd     *exec.Cmd
	etcd    *etcd.Server
	etcdCli *clientv3.Client
	cfg     *rest.Config
	kube    *clusters.ClusterClientset
	stopped bool
	// binary, args and url start the process again (restart).
	binary string
	args   []string
	url    string
	// readyIn is how long the last start took, from exec until /readyz
	// answered 200 (polled every 10 ms).
	readyIn time.Duration
}

func startShard(ctx context.Context, binary string, extraArgs ...string) (*shard, error) {
	dir, err := os.MkdirTemp("", "tessera-bench-")
	if err != nil {
		return nil, err
	}
	s := &shard{dir: dir}
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = etcd.FreePort(); err != nil {
			return nil, err
		}
	}
	if s.etcd, err = etcd.Start(ctx, etcd.Options{Dir: filepath.Join(dir, "etcd"), ClientPort: ports[0], PeerPort: ports[1], UnsafeNoFsync: true, LogLevel: "fatal"}); err != nil {
		return nil, err
	}
	if s.etcdCli, err = clientv3.New(clientv3.Config{Endpoints: []string{s.etcd.ClientURL}, DialTimeout: 10 * time.Second}); err != nil {
		s.stop()
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(benchUserToken+","+benchUser+",bench-user-uid,\n"), 0o600); err != nil {
		s.stop()
		return nil, err
	}
	s.args = append([]string{"start", "--root-directory", filepath.Join(dir, "shard"),
		"--secure-port", strconv.Itoa(ports[2]), "--etcd-servers", s.etcd.ClientURL, "--token-auth-file", tokens}, extraArgs...)
	s.binary, s.url = binary, "https://127.0.0.1:"+strconv.Itoa(ports[2])
	if err := s.startProcess(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// startProcess runs the shard process and waits until it is ready.
func (s *shard) startProcess() error {
	s.cmd = exec.Command(s.binary, s.args...)
	log, err := os.OpenFile(filepath.Join(s.dir, "shard.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	s.cmd.Stdout, s.cmd.Stderr = log, log
	started := time.Now()
	if err := s.cmd.Start(); err != nil {
		return err
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 2 * time.Second}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := insecure.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shard did not become ready; log in %s", log.Name())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.readyIn = time.Since(started)
	s.cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: filepath.Join(s.dir, "shard", "admin.kubeconfig")},
		&clientcmd.ConfigOverrides{CurrentContext: "shard-base"}).ClientConfig()
	if err != nil {
		return err
	}
	s.cfg.QPS, s.cfg.Burst = -1, 0
	s.kube, err = clusters.NewForConfig(s.cfg)
	return err
}

// stopProcess stops the shard process (SIGTERM, after 30 s SIGKILL).
func (s *shard) stopProcess() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// restart stops the shard process and starts it again on the same etcd, as
// an operator's restart does: its watch caches then hold the objects
// without the history of how they came to be.
func (s *shard) restart() error {
	s.stopProcess()
	return s.startProcess()
}

// settledRSS waits for the shard's memory to settle and returns its RSS.
func (s *shard) settledRSS(ctx context.Context) (int64, error) {
	return settledProcessRSS(ctx, s.cmd.Process.Pid, 512*1024)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// etcdBytes is the size of the etcd database in use.
func (s *shard) etcdBytes(ctx context.Context) (int64, error) {
	st, err := s.etcdCli.Status(ctx, s.etcd.ClientURL)
	if err != nil {
		return 0, err
	}
	return st.DbSizeInUse, nil
}

func (s *shard) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	s.stopProcess()
	if s.etcdCli != nil {
		_ = s.etcdCli.Close()
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
	_ = os.RemoveAll(s.dir)
}

// profileDir is where saveProfile writes the shard's profiles ("": nowhere).
var profileDir string

// saveProfile writes the shard's pprof profile kind (heap, goroutine, or
// profile?seconds=N for N seconds of CPU) to profileDir/<scenario>.<heap,
// goroutine or cpu>.pb.gz, for go tool pprof.
func (s *shard) saveProfile(ctx context.Context, kind, scenario string) error {
	if profileDir == "" {
		return nil
	}
	resp, err := s.pprof(ctx, kind)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(profileDir, 0o755); err != nil {
		return err
	}
	file, _, _ := strings.Cut(kind, "?")
	if file == "profile" {
		file = "cpu"
	}
	path := filepath.Join(profileDir, scenario+"."+file+".pb.gz")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	fmt.Printf("  (profile: %s)\n", path)
	return f.Close()
}

// pprof requests the shard's /debug/pprof/<kind> as its admin; the caller
// closes the body of the response.
func (s *shard) pprof(ctx context.Context, kind string) (*http.Response, error) {
	client, err := rest.HTTPClientFor(s.cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.Host+"/debug/pprof/"+kind, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("profile %s: HTTP %d", kind, resp.StatusCode)
	}
	return resp, nil
}

// work is what the shard has done so far: API requests by verb and
// resource, and etcd's revision (one per write).
type work struct {
	requests map[string]float64
	revision int64
}

func (s *shard) work(ctx context.Context) (work, error) {
	requests, err := shardMetricByLabels(ctx, s.cfg, "apiserver_request_total", []string{"verb", "resource", "subresource"})
	if err != nil {
		return work{}, err
	}
	resp, err := s.etcdCli.Get(ctx, "/", clientv3.WithCountOnly())
	if err != nil {
		return work{}, err
	}
	return work{requests: requests, revision: resp.Header.Revision}, nil
}

// per describes the work done since before for each of n things: etcd
// writes and the most frequent API requests.
func (w work) per(before work, n int, thing string) string {
	type count struct {
		what string
		n    float64
	}
	var counts []count
	total := 0.0
	for what, v := range w.requests {
		if d := v - before.requests[what]; d > 0 {
			counts = append(counts, count{what, d})
			total += d
		}
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i].n > counts[j].n })
	var b strings.Builder
	fmt.Fprintf(&b, "          per %s: %.1f etcd writes, %.1f API requests to the shard (its own controllers' included):", thing,
		float64(w.revision-before.revision)/float64(n), total/float64(n))
	for i, c := range counts {
		if i == 12 {
			break
		}
		fmt.Fprintf(&b, " %s %.2f;", c.what, c.n/float64(n))
	}
	return strings.TrimSuffix(b.String(), ";") + "\n"
}

// liveHeap forces a garbage collection in the shard and returns its live
// heap in bytes; with -profiles, the heap profile of that moment is saved as
// scenario.
func (s *shard) liveHeap(ctx context.Context, scenario string) (float64, error) {
	if err := s.collectGarbage(ctx); err != nil {
		return 0, err
	}
	if err := s.saveProfile(ctx, "heap", scenario); err != nil {
		return 0, err
	}
	return shardMetric(ctx, s.cfg, "go_memstats_heap_alloc_bytes")
}

// collectGarbage makes the shard run a garbage collection (a heap profile
// with gc=1), so that its live heap can be read from /metrics.
func (s *shard) collectGarbage(ctx context.Context) error {
	resp, err := s.pprof(ctx, "heap?gc=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}
