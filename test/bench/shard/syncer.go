package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/cli/workload"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/syncer"
)

var (
	benchDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	benchConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	benchNamespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	benchSyncTargets = schema.GroupVersionResource{Group: "workload.kcp.io", Version: "v1alpha1", Resource: "synctargets"}
)

// syncerBench measures tessera-syncer: how long a Deployment created in a
// workspace takes to appear on the physical cluster, and its downstream
// status to come back, for deployments across workspaces; and the
// syncer's memory with many synced objects. The physical cluster is a
// workspace of the same shard bound to the compute service's kubernetes
// export (a real API server with Deployments), so both hops are real HTTPS
// through the syncer virtual workspace; the downstream status is written
// by the benchmark, as a deployment controller would.
func syncerBench(ctx context.Context, binary, syncerBinary string, workspaces, deploymentsN, rate, objects int) error {
	s, err := startShard(ctx, binary, "--batteries-included=root-compute-workspace")
	if err != nil {
		return err
	}
	defer s.stop()
	kcp, err := clusters.NewKCPForConfig(s.cfg)
	if err != nil {
		return err
	}
	dyn, err := clusters.NewDynamicForConfig(s.cfg)
	if err != nil {
		return err
	}
	compute, identity, err := waitComputeWorkspace(ctx, kcp)
	if err != nil {
		return err
	}
	for _, name := range []string{"workload.kcp.io", "scheduling.kcp.io"} {
		if err := bindExport(ctx, kcp, compute, name, "root", name); err != nil {
			return err
		}
	}
	phys, err := createReadyWorkspace(ctx, kcp, logicalcluster.Root, "phys")
	if err != nil {
		return err
	}
	if err := bindExport(ctx, kcp, phys, "kubernetes", "root:compute", "kubernetes"); err != nil {
		return err
	}
	if err := applyManifest(ctx, dyn.Cluster(compute), syncTargetManifest); err != nil {
		return err
	}
	// The syncer's rights, as kubectl kcp workload sync grants them.
	if _, err := s.kube.Cluster(compute).RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "syncer-bench"}, Rules: workload.WorkspaceRules("bench"),
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	st, err := dyn.Cluster(compute).Resource(benchSyncTargets).Get(ctx, "bench", metav1.GetOptions{})
	if err != nil {
		return err
	}

	// The syncer, as a process, as the bench user.
	from, err := writeBenchKubeconfig(s, "from", s.cfg.Host+"/clusters/root:compute", benchUserToken)
	if err != nil {
		return err
	}
	to, err := writeBenchKubeconfig(s, "to", s.cfg.Host+"/clusters/"+phys.String(), "")
	if err != nil {
		return err
	}
	cmd, log, stop, err := startLogged(filepath.Join(s.dir, "syncer.log"), syncerBinary, "--from-kubeconfig", from, "--to-kubeconfig", to, "--sync-target-name", "bench",
		"--sync-target-uid", string(st.GetUID()), "--qps", "500", "--burst", "1000", "--workers", "8", "-v", "1")
	if err != nil {
		return err
	}
	defer stop()
	if err := waitFor(ctx, 2*time.Minute, "SyncTarget bench Ready", func() (bool, error) {
		st, err := dyn.Cluster(compute).Resource(benchSyncTargets).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(st.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("%w (syncer log %s)", err, log.Name())
	}
	idleRSS, err := settledProcessRSS(ctx, cmd.Process.Pid, 256*1024)
	if err != nil {
		return err
	}

	// Workspaces bound to compute; the default Placement schedules their
	// namespace default.
	fmt.Printf("Syncer: %d workspaces bound to compute, %d deployments created at %d/s, %d synced objects (syncer and shard on one machine)\n", workspaces, deploymentsN, rate, objects)
	apps := make([]logicalcluster.Name, workspaces)
	if err := parallel(ctx, workspaces, 16, func(ctx context.Context, i int) error {
		c, err := createReadyWorkspace(ctx, kcp, logicalcluster.Root, fmt.Sprintf("app-%03d", i))
		if err != nil {
			return err
		}
		apps[i] = c
		for _, b := range [][3]string{{"scheduling.kcp.io", "root", "scheduling.kcp.io"}, {"kubernetes", "root:compute", "kubernetes"}} {
			if err := bindExport(ctx, kcp, c, b[0], b[1], b[2]); err != nil {
				return err
			}
		}
		return waitFor(ctx, 2*time.Minute, "namespace default placed", func() (bool, error) {
			ns, err := dyn.Cluster(c).Resource(benchNamespaces).Get(ctx, "default", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for k, v := range ns.GetLabels() {
				if strings.HasPrefix(k, "state.workload.kcp.io/") && v == "Sync" {
					return true, nil
				}
			}
			return false, nil
		})
	}); err != nil {
		return err
	}
	downNamespace := map[string]string{} // downstream namespace -> upstream cluster
	for _, c := range apps {
		downNamespace[syncer.DownstreamNamespace(syncer.NamespaceLocator{
			SyncTarget: syncer.SyncTargetLocator{Cluster: compute.String(), Name: "bench", UID: st.GetUID()},
			Cluster:    c.String(), Namespace: "default",
		})] = c.String()
	}

	// Latency: create → downstream, downstream status → upstream.
	lat := newSyncLatencies()
	downWatch, err := dyn.Cluster(phys).Resource(benchDeployments).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	defer downWatch.Stop()
	upWatch, err := dyn.Wildcard().Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments:" + identity}).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	defer upWatch.Stop()
	down := dyn.Cluster(phys).Resource(benchDeployments)
	statusDone := make(chan struct{})
	go func() {
		for ev := range downWatch.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type != watch.Added {
				continue
			}
			key := downNamespace[u.GetNamespace()] + "/" + u.GetName()
			if lat.down(key) {
				go writeStatus(ctx, down.Namespace(u.GetNamespace()), u, "downstream status", func(u *unstructured.Unstructured) {
					// As a deployment controller does.
					u.Object["status"] = map[string]any{"replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(1), "observedGeneration": u.GetGeneration()}
					lat.statusWritten(key)
				})
			}
		}
	}()
	go func() {
		defer close(statusDone)
		for ev := range upWatch.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if r, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); r == 1 {
				if lat.statusBack(logicalcluster.From(u).String()+"/"+u.GetName()) == deploymentsN {
					return
				}
			}
		}
	}()
	start := time.Now()
	// Created at a steady rate, as workloads arrive, so that the figures
	// are the syncer's latency rather than a backlog's.
	pace := time.NewTicker(time.Second / time.Duration(max(rate, 1)))
	defer pace.Stop()
	if err := parallel(ctx, deploymentsN, 16, func(ctx context.Context, i int) error {
		select {
		case <-pace.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		c := apps[i%len(apps)]
		name := fmt.Sprintf("d-%04d", i)
		lat.created(c.String() + "/" + name)
		_, err := dyn.Cluster(c).Resource(benchDeployments).Namespace("default").Create(ctx, benchDeployment(name), metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	select {
	case <-statusDone:
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("after 5 minutes, %d of %d statuses came back (syncer log %s)", lat.statusBack(""), deploymentsN, log.Name())
	case <-ctx.Done():
		return ctx.Err()
	}
	total := time.Since(start)
	toDown, back := lat.figures()
	fmt.Printf("  create → downstream:          p50 %v  p99 %v  max %v  (%d deployments, %.0f/s end to end)\n", pct(toDown, 50), pct(toDown, 99), pct(toDown, 100), len(toDown), float64(deploymentsN)/total.Seconds())
	fmt.Printf("  downstream status → upstream: p50 %v  p99 %v  max %v\n", pct(back, 50), pct(back, 99), pct(back, 100))

	// Memory with many synced objects.
	if err := parallel(ctx, objects, 32, func(ctx context.Context, i int) error {
		c := apps[i%len(apps)]
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i)}, "data": map[string]any{"k": "v"}}}
		_, err := dyn.Cluster(c).Resource(benchConfigMaps).Namespace("default").Create(ctx, cm, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, 10*time.Minute, "synced configmaps downstream", func() (bool, error) {
		l, err := dyn.Cluster(phys).Resource(benchConfigMaps).List(ctx, metav1.ListOptions{LabelSelector: "internal.workload.kcp.io/cluster"})
		return err == nil && len(l.Items) >= objects, nil
	}); err != nil {
		return err
	}
	fullRSS, err := settledProcessRSS(ctx, cmd.Process.Pid, 256*1024)
	if err != nil {
		return err
	}
	synced := objects + deploymentsN
	fmt.Printf("  syncer RSS: %s idle, %s with %d synced objects (%.1f KiB per object)\n\n", mib(idleRSS), mib(fullRSS), synced, float64(fullRSS-idleRSS)/1024/float64(synced))
	return nil
}

const syncTargetManifest = `apiVersion: workload.kcp.io/v1alpha1
kind: SyncTarget
metadata:
  name: bench
spec:
  supportedAPIExports:
  - export: kubernetes
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: syncer-bench
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: syncer-bench}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: bench-user}
`

// syncLatencies records, per upstream cluster/name, when a deployment was
// created, seen downstream, its downstream status written and seen back.
type syncLatencies struct {
	mu                           sync.Mutex
	createdAt, downAt, writtenAt map[string]time.Time
	toDown, back                 []time.Duration
	backCount                    int
	seenBack                     map[string]bool
}

func newSyncLatencies() *syncLatencies {
	return &syncLatencies{createdAt: map[string]time.Time{}, downAt: map[string]time.Time{}, writtenAt: map[string]time.Time{}, seenBack: map[string]bool{}}
}

func (l *syncLatencies) created(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.createdAt[key] = time.Now()
}

// down records the first downstream sighting; false when seen before.
func (l *syncLatencies) down(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, seen := l.downAt[key]; seen {
		return false
	}
	now := time.Now()
	l.downAt[key] = now
	if c, ok := l.createdAt[key]; ok {
		l.toDown = append(l.toDown, now.Sub(c))
	}
	return true
}

func (l *syncLatencies) statusWritten(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writtenAt[key] = time.Now()
}

// statusBack records the status's arrival upstream and returns how many
// came back.
func (l *syncLatencies) statusBack(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if key != "" && !l.seenBack[key] {
		if w, ok := l.writtenAt[key]; ok {
			l.seenBack[key] = true
			l.back = append(l.back, time.Since(w))
		}
	}
	return len(l.seenBack)
}

func (l *syncLatencies) figures() (toDown, back []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	toDown, back = append([]time.Duration(nil), l.toDown...), append([]time.Duration(nil), l.back...)
	sort.Slice(toDown, func(i, j int) bool { return toDown[i] < toDown[j] })
	sort.Slice(back, func(i, j int) bool { return back[i] < back[j] })
	return toDown, back
}

func benchDeployment(name string) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}}}
}

// waitComputeWorkspace waits for root:compute's export kubernetes and
// returns the workspace's cluster and the export's identity.
func waitComputeWorkspace(ctx context.Context, kcp *clusters.KCPClusterClientset) (logicalcluster.Name, string, error) {
	var cluster logicalcluster.Name
	var identity string
	err := waitFor(ctx, 2*time.Minute, "root:compute's APIExport kubernetes", func() (bool, error) {
		ws, err := kcp.Cluster(logicalcluster.Root).Workspaces().Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cluster = logicalcluster.Name(ws.Spec.Cluster)
		e, err := kcp.Cluster(cluster).APIExports().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		identity = e.Status.IdentityHash
		return identity != "", nil
	})
	return cluster, identity, err
}

// bindExport binds path:export in cluster as name and waits until bound.
func bindExport(ctx context.Context, kcp *clusters.KCPClusterClientset, cluster logicalcluster.Name, name, path, export string) error {
	_, err := kcp.Cluster(cluster).APIBindings().Create(ctx, &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: path, Name: export}}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding %s:%s in %s: %w", path, export, cluster, err)
	}
	return waitFor(ctx, time.Minute, "binding "+name+" in "+cluster.String(), func() (bool, error) {
		b, err := kcp.Cluster(cluster).APIBindings().Get(ctx, name, metav1.GetOptions{})
		return err == nil && b.Status.Phase == apisv1alpha1.APIBindingPhaseBound, nil
	})
}

// applyManifest creates the objects of a YAML stream, retrying while a
// just-bound resource is not served yet.
func applyManifest(ctx context.Context, client dynamic.Interface, manifest string) error {
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
		if err != nil {
			return err
		}
		resource := strings.ToLower(u.GetKind()) + "s"
		if err := waitFor(ctx, time.Minute, "creating "+u.GetKind()+" "+u.GetName(), func() (bool, error) {
			_, err := client.Resource(gv.WithResource(resource)).Create(ctx, u, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// writeBenchKubeconfig writes a kubeconfig for server with a token, or
// with the shard admin's client certificate when token is empty.
func writeBenchKubeconfig(s *shard, name, server, token string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	ca := s.cfg.CAData
	if len(ca) == 0 && s.cfg.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(s.cfg.CAFile); err != nil {
			return "", err
		}
	}
	user := &clientcmdapi.AuthInfo{Token: token}
	if token == "" {
		user = &clientcmdapi.AuthInfo{ClientCertificateData: s.cfg.CertData, ClientKeyData: s.cfg.KeyData, ClientCertificate: s.cfg.CertFile, ClientKey: s.cfg.KeyFile}
	}
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = user
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(s.dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

// waitFor polls cond every 200ms for up to timeout.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: timed out (last error: %v)", what, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// settledProcessRSS waits for a process's memory to settle within
// tolerance bytes between two looks 2 s apart (20 s at most).
func settledProcessRSS(ctx context.Context, pid int, tolerance int64) (int64, error) {
	var last int64
	for range 10 {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Second):
		}
		r, err := rss(pid)
		if err != nil {
			return 0, err
		}
		if last != 0 && abs(r-last) < tolerance {
			return r, nil
		}
		last = r
	}
	return last, nil
}

// writeStatus sets u's status with set and writes it, as a controller
// does: on a conflict, again with the latest object (up to 10 times).
func writeStatus(ctx context.Context, client dynamic.ResourceInterface, u *unstructured.Unstructured, what string, set func(*unstructured.Unstructured)) {
	for range 10 {
		set(u)
		_, err := client.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", what+":", err)
			}
			return
		}
		latest, err := client.Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", what+":", err)
			return
		}
		u = latest
	}
}

// startLogged starts binary with args, its output going to the file
// logPath, and returns the process, the log and a stop that kills the
// process and closes the log.
func startLogged(logPath, binary string, args ...string) (*exec.Cmd, *os.File, func(), error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, nil, nil, err
	}
	return cmd, log, func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); log.Close() }, nil
}
