// Package framework is the harness of the e2e suites under test/e2e: it runs
// the real Tessera binaries as separate processes (or uses an installation
// that is already running), provides physical clusters, runs kubectl and
// helm, keeps a log per process and prints them when a spec fails, and stops
// every process it started by its PID when the suite ends, fails or is
// interrupted.
//
// It is configured through the environment; `make test-e2e` sets it:
//
//	TESSERA_E2E=1                       run the suites (without it, or a kubeconfig, they skip)
//	TESSERA_E2E_KUBECONFIG              admin kubeconfig of a running installation; none is started
//	TESSERA_E2E_CONTEXT                 its context to use (default "shard-base", else "base" when present, else current)
//	TESSERA_E2E_USER_TOKEN              bearer token of a user who is not a shard admin there
//	TESSERA_E2E_BIN_DIR                 the built tessera binaries (default <repo>/bin)
//	TESSERA_E2E_TOOLS_PATH              directories with etcd, kube-apiserver, kube-controller-manager,
//	                                    kube-scheduler, kwok, helm, kind (searched before PATH)
//	KUBECTL                             the kubectl binary (default /usr/bin/kubectl, then PATH)
//	TESSERA_E2E_PHYSICAL_PROVIDER       local (default), kind, kubeconfig or real
//	TESSERA_E2E_PHYSICAL_KUBECONFIGS    kubeconfigs of running physical clusters (provider kubeconfig)
//
// Suites whose pods must really run (RealProvider, RealCluster) get kind
// clusters when TESSERA_E2E_PHYSICAL_PROVIDER=kind, the clusters of
// TESSERA_E2E_PHYSICAL_KUBECONFIGS when it is kubeconfig, and otherwise the
// real provider: one cluster on this machine (root; hack/real-cluster.sh
// prepares the host; kubelet, kube-proxy and coredns come from
// TESSERA_E2E_TOOLS_PATH like the other tools, containerd, runc, ctr and the
// CNI plugins from Debian packages the script installs). One real cluster
// runs on a machine at a time: another one's Create waits up to
// TESSERA_E2E_REAL_WAIT (a duration, default 0: refuse at once; hack/e2e.sh
// sets 20m, so that suites of one run take turns).
//
//	TESSERA_E2E_KIND_IMAGE              node image for kind (default physical.KindNodeImage)
//	TESSERA_E2E_ARTIFACTS               keep logs and data in this directory (default: a temporary
//	                                    directory, removed when every spec passed)
//	TESSERA_E2E_LEDGER                  file listing what was started, for hack/e2e.sh's final sweep
//	TESSERA_E2E_TIMING_FILE             file the per-phase timing lines are appended to
package framework

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tessera-dev/tessera/test/e2e/framework/physical"
	"github.com/tessera-dev/tessera/test/e2e/framework/process"
	"github.com/tessera-dev/tessera/test/e2e/framework/sharded"
)

// Enabled reports whether the environment asks for the e2e suites; `go test
// ./...` alone skips them, `make test-e2e` runs them.
func Enabled() bool {
	return os.Getenv("TESSERA_E2E") == "1" || os.Getenv("TESSERA_E2E_KUBECONFIG") != ""
}

// Env is what one suite (one test binary) shares across its specs: the work
// directory, the processes, one Tessera installation and the physical
// clusters, each started on first use.
type Env struct {
	// Area names the suite in logs, directories and the timing summary.
	Area string
	// Dir holds the logs and data of this run.
	Dir string

	keep  bool
	group *process.Group
	// TesseraArgs are more flags of the tessera process the framework
	// starts (set before the first Tessera call), e.g. a battery.
	TesseraArgs []string
	// RunID makes the names of this run unique (logical clusters, kind
	// clusters), so that runs against a shared installation do not collide.
	RunID string

	// startMu serializes starting the installation and physical clusters;
	// mu guards the fields below.
	startMu  sync.Mutex
	mu       sync.Mutex
	timings  []Timing
	tessera  *Tessera
	sharded  *sharded.Installation
	provider physical.Provider
	clusters []*physical.Cluster
	// real and realCluster are the provider and cluster of RealCluster.
	real        physical.Provider
	realCluster *physical.Cluster
	realErr     error
	// tesseraErr and physicalErr are the first failures to start the
	// installation and physical clusters; later specs get them at once
	// instead of trying again.
	tesseraErr, physicalErr error
	marks                   map[string]int64
}

// Timing is how long one phase took.
type Timing struct {
	Phase    string
	Duration time.Duration
}

// NewEnv creates the work directory and the process group.
func NewEnv(area string) (*Env, error) {
	e := &Env{Area: area}
	if err := e.init(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Env) init() error {
	area := e.Area
	id := make([]byte, 3)
	if _, err := rand.Read(id); err != nil {
		return err
	}
	e.RunID = hex.EncodeToString(id)
	if dir := os.Getenv("TESSERA_E2E_ARTIFACTS"); dir != "" {
		e.Dir, e.keep = filepath.Join(dir, area), true
		if err := os.MkdirAll(e.Dir, 0o755); err != nil {
			return err
		}
	} else {
		dir, err := os.MkdirTemp("", "tessera-e2e-"+area+"-")
		if err != nil {
			return err
		}
		e.Dir = dir
	}
	group, err := process.NewGroup(filepath.Join(e.Dir, "logs"), os.Getenv("TESSERA_E2E_LEDGER"))
	if err != nil {
		return err
	}
	e.group = group
	return nil
}

// Group returns the suite's process group, to start processes that the
// suite stops with the others.
func (e *Env) Group() *process.Group { return e.group }

// Processes returns every process this suite started.
func (e *Env) Processes() []*process.Process { return e.group.Processes() }

// Time runs f and records how long it took as phase.
func (e *Env) Time(phase string, f func() error) error {
	start := time.Now()
	err := f()
	e.mu.Lock()
	e.timings = append(e.timings, Timing{Phase: phase, Duration: time.Since(start)})
	e.mu.Unlock()
	return err
}

// Timings returns the recorded phases.
func (e *Env) Timings() []Timing {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Timing(nil), e.timings...)
}

// Name returns prefix-<run id>, a name unique to this run.
func (e *Env) Name(prefix string) string { return prefix + "-" + e.RunID }

// MarkLogs remembers where every log ends now; DumpLogs prints from there.
func (e *Env) MarkLogs() {
	m := e.group.Marks()
	e.mu.Lock()
	e.marks = m
	e.mu.Unlock()
}

// DumpLogs writes what every process logged since MarkLogs (all of it for
// processes started later), at most maxLines lines each.
func (e *Env) DumpLogs(w io.Writer, maxLines int) {
	e.mu.Lock()
	marks := e.marks
	e.mu.Unlock()
	if len(e.group.Processes()) == 0 {
		return
	}
	fmt.Fprintf(w, "\nLogs of the processes of this run (all files under %s):\n", filepath.Join(e.Dir, "logs"))
	e.group.DumpLogs(w, marks, maxLines)
}

// PhysicalProvider returns the provider chosen by the environment.
func (e *Env) PhysicalProvider() (physical.Provider, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.provider != nil {
		return e.provider, nil
	}
	dir := filepath.Join(e.Dir, "physical")
	switch name := os.Getenv("TESSERA_E2E_PHYSICAL_PROVIDER"); name {
	case "", "local":
		var tools physical.LocalTools
		var errs []error
		for _, t := range []struct {
			dst  *string
			name string
		}{
			{&tools.Etcd, "etcd"}, {&tools.KubeAPIServer, "kube-apiserver"},
			{&tools.KubeControllerManager, "kube-controller-manager"},
			{&tools.KubeScheduler, "kube-scheduler"}, {&tools.Kwok, "kwok"},
		} {
			p, err := Tool(t.name)
			*t.dst = p
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("the local physical cluster provider: %w", err)
		}
		e.provider = &physical.Local{Tools: tools, Group: e.group, Dir: dir}
	case "kind":
		kind, err := Tool("kind")
		if err != nil {
			return nil, err
		}
		image := os.Getenv("TESSERA_E2E_KIND_IMAGE")
		if image == "" {
			image = physical.KindNodeImage
		}
		e.provider = &physical.Kind{Kind: kind, Image: image, Prefix: "tessera-e2e-" + e.Area + "-" + e.RunID,
			Dir: dir, Ledger: os.Getenv("TESSERA_E2E_LEDGER")}
	case "kubeconfig":
		paths := physical.SplitList(os.Getenv("TESSERA_E2E_PHYSICAL_KUBECONFIGS"))
		if len(paths) == 0 {
			return nil, errors.New("TESSERA_E2E_PHYSICAL_PROVIDER=kubeconfig needs TESSERA_E2E_PHYSICAL_KUBECONFIGS")
		}
		e.provider = &physical.Kubeconfigs{Paths: paths}
	default:
		return nil, fmt.Errorf("unknown TESSERA_E2E_PHYSICAL_PROVIDER %q: local, kind or kubeconfig", name)
	}
	return e.provider, nil
}

// PhysicalClusters returns n physical clusters named p1..pn. The first call
// that needs more clusters than exist creates the missing ones in parallel;
// later specs of the suite reuse them.
func (e *Env) PhysicalClusters(ctx context.Context, n int) ([]*physical.Cluster, error) {
	cs, err := e.physicalClusters(ctx, n)
	return cs, flat(err)
}

func (e *Env) physicalClusters(ctx context.Context, n int) ([]*physical.Cluster, error) {
	e.startMu.Lock()
	defer e.startMu.Unlock()
	if e.physicalErr != nil {
		return nil, fmt.Errorf("an earlier start failed: %w", e.physicalErr)
	}
	provider, err := e.PhysicalProvider()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	have := len(e.clusters)
	e.mu.Unlock()
	if have >= n {
		e.mu.Lock()
		defer e.mu.Unlock()
		return append([]*physical.Cluster(nil), e.clusters[:n]...), nil
	}
	created := make([]*physical.Cluster, n-have)
	errs := make([]error, n-have)
	var names []string
	for i := have; i < n; i++ {
		names = append(names, fmt.Sprintf("p%d", i+1))
	}
	phase := fmt.Sprintf("start physical clusters %s (%s)", strings.Join(names, ","), provider.Name())
	_ = e.Time(phase, func() error {
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				created[i], errs[i] = provider.Create(ctx, name)
			}()
		}
		wg.Wait()
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		// Keep the numbering simple: a batch is all or nothing.
		for _, c := range created {
			if c != nil {
				errs = append(errs, provider.Delete(context.WithoutCancel(ctx), c))
			}
		}
		e.physicalErr = errors.Join(errs...)
		return nil, e.physicalErr
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clusters = append(e.clusters, created...)
	return append([]*physical.Cluster(nil), e.clusters[:n]...), nil
}

// Teardown deletes the physical clusters and stops every process, each by
// its PID; it returns what did not stop cleanly.
func (e *Env) Teardown(ctx context.Context) []error {
	var errs []error
	_ = e.Time("stop", func() error {
		e.mu.Lock()
		clusters, provider := e.clusters, e.provider
		e.clusters = nil
		real, realCluster := e.real, e.realCluster
		e.realCluster = nil
		e.mu.Unlock()
		if realCluster != nil {
			if err := real.Delete(ctx, realCluster); err != nil {
				errs = append(errs, err)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, c := range clusters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := provider.Delete(ctx, c); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		errs = append(errs, e.group.StopAll(30*time.Second)...)
		return nil
	})
	return errs
}

// Finish writes the timing summary and removes the work directory when the
// suite passed and nothing asked to keep it.
func (e *Env) Finish(w io.Writer, total time.Duration, passed bool) {
	summary := e.Summary(total)
	fmt.Fprintln(w, summary)
	if f := os.Getenv("TESSERA_E2E_TIMING_FILE"); f != "" {
		if fh, err := os.OpenFile(f, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintln(fh, summary)
			fh.Close()
		}
	}
	if passed && !e.keep {
		_ = os.RemoveAll(e.Dir)
		return
	}
	fmt.Fprintf(w, "e2e [%s]: logs and data kept in %s\n", e.Area, e.Dir)
}

// Summary is one line: the phases of this suite and their durations. The
// time not spent starting or stopping is the specs'.
func (e *Env) Summary(total time.Duration) string {
	timings := e.Timings()
	var parts []string
	var accounted time.Duration
	for _, t := range timings {
		accounted += t.Duration
		parts = append(parts, fmt.Sprintf("%s %s", t.Phase, t.Duration.Round(100*time.Millisecond)))
	}
	specs := max(total-accounted, 0)
	parts = append(parts, fmt.Sprintf("specs %s", specs.Round(100*time.Millisecond)))
	return fmt.Sprintf("e2e timing [%s]: %s (total %s)", e.Area, strings.Join(parts, ", "), total.Round(100*time.Millisecond))
}

// Tool finds a binary: in the directories of TESSERA_E2E_TOOLS_PATH, then on
// PATH.
func Tool(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("TESSERA_E2E_TOOLS_PATH")) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found in TESSERA_E2E_TOOLS_PATH (%q) or PATH; `make e2e-tools` builds it", name, os.Getenv("TESSERA_E2E_TOOLS_PATH"))
}

// KubectlPath finds kubectl: $KUBECTL, /usr/bin/kubectl, then PATH.
func KubectlPath() (string, error) {
	for _, p := range []string{os.Getenv("KUBECTL"), "/usr/bin/kubectl"} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p, nil
	}
	return "", errors.New("kubectl not found: set KUBECTL (make builds one when the machine has none)")
}

// Run runs a command with extra environment variables and returns its
// combined output; ctx bounds it. An error is an *Error that tells the
// command, how it ended and its output.
func Run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := command(ctx, env, name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), flat(fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out))
	}
	return string(out), nil
}

// Output runs a command like Run but returns its standard output alone, what
// a shell's `> file` keeps; an error carries the standard error too.
func Output(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := command(ctx, env, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), flat(fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr.Bytes()))
	}
	return string(out), nil
}

func command(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Kubectl runs kubectl with a kubeconfig and returns its combined output.
func (e *Env) Kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	kubectl, err := KubectlPath()
	if err != nil {
		return "", err
	}
	return Run(ctx, []string{"KUBECACHEDIR=" + filepath.Join(e.Dir, "kubectl-cache")}, kubectl,
		append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// Helm runs helm with a kubeconfig, with its cache, configuration and data
// kept in the work directory, and returns its combined output.
func (e *Env) Helm(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	helm, err := Tool("helm")
	if err != nil {
		return "", err
	}
	home := filepath.Join(e.Dir, "helm")
	return Run(ctx, []string{
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data"),
		"KUBECONFIG=" + kubeconfig,
	}, helm, args...)
}

// NonLoopbackListeners lists the TCP sockets of this suite's processes that
// listen on an address other than 127.0.0.1 or ::1.
func (e *Env) NonLoopbackListeners() ([]string, error) {
	ls, err := process.Listeners(e.group.Processes())
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, l := range ls {
		if !l.Addr.Addr().IsLoopback() {
			bad = append(bad, fmt.Sprintf("%s on %s", l.Process, l.Addr))
		}
	}
	sort.Strings(bad)
	return bad, nil
}

// Listening returns how many TCP sockets this suite's processes listen on.
func (e *Env) Listening() (int, error) {
	ls, err := process.Listeners(e.group.Processes())
	return len(ls), err
}

// Error is an error whose report is its message alone: gomega prints the
// message once instead of the nested structure of wrapped errors, which
// repeats every message (process log tails included) at each level.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// GomegaString implements gomega's format.GomegaStringer.
func (e *Error) GomegaString() string { return e.msg }

// flat returns err as an *Error, nil as nil.
func flat(err error) error {
	if err == nil {
		return nil
	}
	return &Error{msg: err.Error()}
}
