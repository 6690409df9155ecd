package deploye2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

var workspacesGVR = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}

// createAndWait creates n workspaces bulk-<i> with 8 clients and waits
// until every one is Ready.
func createAndWait(ctx context.Context, dyn dynamic.Interface, n int) error {
	ws := dyn.Resource(workspacesGVR)
	next := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				obj := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace",
					"metadata": map[string]any{"name": fmt.Sprintf("bulk-%04d", i)},
				}}
				err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					_, err := ws.Create(ctx, obj, metav1.CreateOptions{})
					return err == nil, nil
				})
				if err != nil {
					errs <- fmt.Errorf("creating workspace bulk-%04d: %w", i, err)
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			return err
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	var ready int
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := ws.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready = 0
		for _, it := range list.Items {
			if phase, _, _ := unstructured.NestedString(it.Object, "status", "phase"); phase == "Ready" {
				ready++
			}
		}
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d workspaces Ready: %w", ready, n, err)
	}
	return nil
}

// bytes is an amount of memory.
type bytes int64

func (b bytes) String() string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// rssOf sums VmRSS of the processes whose argv[0] match.
func rssOf(match func(argv0 string) bool) (bytes, int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	var sum bytes
	var n int
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if !match(argv0) {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				sum += bytes(kb << 10)
				n++
			}
		}
	}
	return sum, n, nil
}
