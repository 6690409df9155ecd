package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/syncer/servlet/objects"
)

var (
	benchCertificates = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	benchZertifikate  = schema.GroupVersionResource{Group: "certs.example.corp", Version: "v1beta1", Resource: "zertifikate"}
)

// servletBench measures tessera-servlet: how long a Zertifikat created in
// a consumer workspace takes to appear on the service cluster as a
// Certificate, and the status the service's controller writes there to
// come back, with many consumer workspaces bound to the Service; objects
// synced per second end to end; and the servlet's memory and threads with
// those workspaces (nothing is started per workspace). The service cluster
// is a workspace of the same shard (a real API server with the
// Certificate CRD), the servlet the real binary as a process, reaching the
// consumers through the apiexport virtual workspace over HTTPS; the
// benchmark plays the service's controller (cert-manager), writing the
// status of each Certificate as soon as it appears.
func servletBench(ctx context.Context, binary, servletBinary string, workspaces, objectsN, rate int) error {
	s, err := startShard(ctx, binary)
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
	service, err := createReadyWorkspace(ctx, kcp, logicalcluster.Root, "service-cluster")
	if err != nil {
		return err
	}
	provider, err := createReadyWorkspace(ctx, kcp, logicalcluster.Root, "provider")
	if err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join("deploy", "servlet", "examples", "certificate-crd.yaml"))
	if err != nil {
		return fmt.Errorf("run the benchmark from the repository's root: %w", err)
	}
	if err := applyManifest(ctx, dyn.Cluster(service), string(crd)); err != nil {
		return err
	}

	platformKubeconfig, err := writeBenchKubeconfig(s, "platform", s.cfg.Host+"/clusters/root:provider", "")
	if err != nil {
		return err
	}
	serviceKubeconfig, err := writeBenchKubeconfig(s, "service", s.cfg.Host+"/clusters/"+service.String(), "")
	if err != nil {
		return err
	}
	cmd, log, stop, err := startLogged(filepath.Join(s.dir, "servlet.log"), servletBinary, "--platform-kubeconfig", platformKubeconfig, "--service-kubeconfig", serviceKubeconfig,
		"--service-name", "certificate-management", "--namespace", "default", "--qps", "500", "--burst", "1000", "--workers", "8")
	if err != nil {
		return err
	}
	defer stop()

	// The Service and the seed's PublishedResource, as a provider applies
	// them (the servlet installs their CRDs first).
	for _, m := range []struct {
		cluster logicalcluster.Name
		file    string
	}{{provider, "service.yaml"}, {service, "publishedresource-certificates.yaml"}} {
		b, err := os.ReadFile(filepath.Join("deploy", "servlet", "examples", m.file))
		if err != nil {
			return fmt.Errorf("run the benchmark from the repository's root: %w", err)
		}
		if err := applyManifest(ctx, dyn.Cluster(m.cluster), string(b)); err != nil {
			return err
		}
	}
	var identity string
	if err := waitFor(ctx, 2*time.Minute, "the APIExport certs.example.corp", func() (bool, error) {
		e, err := kcp.Cluster(provider).APIExports().Get(ctx, "certs.example.corp", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		identity = e.Status.IdentityHash
		return identity != "" && len(e.Spec.LatestResourceSchemas) == 1 && len(e.Spec.PermissionClaims) == 2, nil
	}); err != nil {
		return fmt.Errorf("%w (servlet log %s)", err, log.Name())
	}
	idleRSS, err := settledProcessRSS(ctx, cmd.Process.Pid, 256*1024)
	if err != nil {
		return err
	}
	idleThreads := processThreads(cmd.Process.Pid)

	fmt.Printf("Servlet: %d consumer workspaces bound to the Service; %d Zertifikate created at %d/s, then %d at once (servlet and shard on one machine)\n", workspaces, objectsN, rate, objectsN)
	consumers := make([]logicalcluster.Name, workspaces)
	start := time.Now()
	if err := parallel(ctx, workspaces, 16, func(ctx context.Context, i int) error {
		c, err := createReadyWorkspace(ctx, kcp, logicalcluster.Root, fmt.Sprintf("consumer-%04d", i))
		if err != nil {
			return err
		}
		consumers[i] = c
		return bindAccepting(ctx, kcp, c)
	}); err != nil {
		return err
	}
	bound := time.Since(start)
	boundRSS, err := settledProcessRSS(ctx, cmd.Process.Pid, 256*1024)
	if err != nil {
		return err
	}
	boundThreads := processThreads(cmd.Process.Pid)
	fmt.Printf("  %d workspaces created and bound in %v\n", workspaces, bound.Round(time.Millisecond))

	certs := dyn.Cluster(service).Resource(benchCertificates).Namespace("kube-system")
	zerts := dyn.Wildcard().Resource(schema.GroupVersionResource{Group: benchZertifikate.Group, Version: benchZertifikate.Version, Resource: benchZertifikate.Resource + ":" + identity})
	create := func(ctx context.Context, c logicalcluster.Name, name string) error {
		z := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "certs.example.corp/v1beta1", "kind": "Zertifikat",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec":     map[string]any{"secretName": name},
		}}
		_, err := dyn.Cluster(c).Resource(benchZertifikate).Namespace("default").Create(ctx, z, metav1.CreateOptions{})
		return err
	}
	// Latency at a steady rate, so that the figures are the servlet's
	// latency rather than a backlog's; then throughput, all at once.
	paced, err := servletPhase(ctx, certs, zerts, consumers, "cert", objectsN, rate, create)
	if err != nil {
		return fmt.Errorf("%w (servlet log %s)", err, log.Name())
	}
	burst, err := servletPhase(ctx, certs, zerts, consumers, "burst", objectsN, 0, create)
	if err != nil {
		return fmt.Errorf("%w (servlet log %s)", err, log.Name())
	}
	fullRSS, err := settledProcessRSS(ctx, cmd.Process.Pid, 256*1024)
	if err != nil {
		return err
	}
	fmt.Printf("  at %d/s, create → service cluster:   p50 %v  p99 %v  max %v  (%d Zertifikate)\n", rate, pct(paced.toDown, 50), pct(paced.toDown, 99), pct(paced.toDown, 100), len(paced.toDown))
	fmt.Printf("  at %d/s, service status → workspace: p50 %v  p99 %v  max %v\n", rate, pct(paced.back, 50), pct(paced.back, 99), pct(paced.back, 100))
	fmt.Printf("  at %d/s, create → status back:       p50 %v  p99 %v\n", rate, pct(paced.endToEnd, 50), pct(paced.endToEnd, 99))
	fmt.Printf("  all at once: %d Zertifikate synced down and their status back in %v: %.0f objects/s (create → status back p50 %v, p99 %v)\n",
		objectsN, burst.total.Round(time.Millisecond), float64(objectsN)/burst.total.Seconds(), pct(burst.endToEnd, 50), pct(burst.endToEnd, 99))
	fmt.Printf("  servlet RSS: %s idle, %s with %d bound workspaces (%.2f KiB per workspace), %s with %d synced objects; threads %d -> %d -> %d\n\n",
		mib(idleRSS), mib(boundRSS), workspaces, float64(boundRSS-idleRSS)/1024/float64(workspaces), mib(fullRSS), 2*objectsN,
		idleThreads, boundThreads, processThreads(cmd.Process.Pid))
	return nil
}

// phaseFigures are the figures of one servlet phase.
type phaseFigures struct {
	toDown, back, endToEnd []time.Duration
	total                  time.Duration
}

// servletPhase creates n Zertifikate named prefix-NNNN across consumers, at
// rate per second (0: all at once, 16 in parallel), plays cert-manager on
// their Certificates, and waits for every status to come back.
func servletPhase(ctx context.Context, certs dynamic.ResourceInterface, zerts dynamic.NamespaceableResourceInterface, consumers []logicalcluster.Name,
	prefix string, n, rate int, create func(context.Context, logicalcluster.Name, string) error) (phaseFigures, error) {
	lat := newSyncLatencies()
	// Watches from now on: objects of earlier phases are not reported.
	certList, err := certs.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return phaseFigures{}, err
	}
	downWatch, err := certs.Watch(ctx, metav1.ListOptions{ResourceVersion: certList.GetResourceVersion()})
	if err != nil {
		return phaseFigures{}, err
	}
	defer downWatch.Stop()
	zertList, err := zerts.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return phaseFigures{}, err
	}
	upWatch, err := zerts.Watch(ctx, metav1.ListOptions{ResourceVersion: zertList.GetResourceVersion()})
	if err != nil {
		return phaseFigures{}, err
	}
	defer upWatch.Stop()
	var mu sync.Mutex
	createdAt := map[string]time.Time{}
	var endToEnd []time.Duration
	statusDone := make(chan struct{})
	go func() {
		for ev := range downWatch.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type != watch.Added {
				continue
			}
			r, ok := objects.RemoteOf(u.GetLabels(), u.GetAnnotations())
			if !ok || !strings.HasPrefix(r.Name, prefix+"-") {
				continue
			}
			key := r.Cluster + "/" + r.Name
			if lat.down(key) {
				go writeStatus(ctx, certs, u, "Certificate status", func(u *unstructured.Unstructured) {
					// As cert-manager does.
					u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
					lat.statusWritten(key)
				})
			}
		}
	}()
	go func() {
		defer close(statusDone)
		for ev := range upWatch.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || !strings.HasPrefix(u.GetName(), prefix+"-") {
				continue
			}
			if conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); len(conds) > 0 {
				key := logicalcluster.From(u).String() + "/" + u.GetName()
				before := lat.statusBack("")
				if lat.statusBack(key) > before {
					mu.Lock()
					if c, ok := createdAt[key]; ok {
						endToEnd = append(endToEnd, time.Since(c))
					}
					mu.Unlock()
				}
				if lat.statusBack("") == n {
					return
				}
			}
		}
	}()
	start := time.Now()
	var pace <-chan time.Time
	if rate > 0 {
		t := time.NewTicker(time.Second / time.Duration(rate))
		defer t.Stop()
		pace = t.C
	}
	if err := parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		if pace != nil {
			select {
			case <-pace:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		c := consumers[i%len(consumers)]
		name := fmt.Sprintf("%s-%04d", prefix, i)
		key := c.String() + "/" + name
		lat.created(key)
		mu.Lock()
		createdAt[key] = time.Now()
		mu.Unlock()
		return create(ctx, c, name)
	}); err != nil {
		return phaseFigures{}, err
	}
	select {
	case <-statusDone:
	case <-time.After(5 * time.Minute):
		return phaseFigures{}, fmt.Errorf("after 5 minutes, %d of %d statuses came back", lat.statusBack(""), n)
	case <-ctx.Done():
		return phaseFigures{}, ctx.Err()
	}
	f := phaseFigures{total: time.Since(start)}
	f.toDown, f.back = lat.figures()
	mu.Lock()
	f.endToEnd = append([]time.Duration(nil), endToEnd...)
	mu.Unlock()
	return f, nil
}

// bindAccepting binds the Service's export in cluster, accepting its
// claims on Secrets and ConfigMaps, and waits until it is bound.
func bindAccepting(ctx context.Context, kcp *clusters.KCPClusterClientset, cluster logicalcluster.Name) error {
	accepted := func(resource string) apisv1alpha1.AcceptablePermissionClaim {
		return apisv1alpha1.AcceptablePermissionClaim{
			PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: resource}, All: true},
			State:           apisv1alpha1.ClaimAccepted,
		}
	}
	_, err := kcp.Cluster(cluster).APIBindings().Create(ctx, &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "certs"},
		Spec: apisv1alpha1.APIBindingSpec{
			Reference:        apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: "root:provider", Name: "certs.example.corp"}},
			PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{accepted("configmaps"), accepted("secrets")},
		},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return waitFor(ctx, time.Minute, "binding certs in "+cluster.String(), func() (bool, error) {
		b, err := kcp.Cluster(cluster).APIBindings().Get(ctx, "certs", metav1.GetOptions{})
		return err == nil && b.Status.Phase == apisv1alpha1.APIBindingPhaseBound, nil
	})
}

// processThreads returns the number of OS threads of a process (0 if
// unknown).
func processThreads(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
