package app_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tessera-dev/tessera/shard/etcd"
)

// TestBinary builds tessera-cache-server, runs it as a process, writes and
// reads a replica with kubectl through the generated kubeconfig, kills the
// process with SIGKILL and checks that a restart on the same root
// directory still has the replica.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl = "/usr/bin/kubectl"
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no kubectl at %s (set KUBECTL): %v", kubectl, err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tessera-cache-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/tessera-dev/tessera/cmd/tessera-cache-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	var ports []int
	for range 3 {
		p, err := etcd.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
	}
	root := filepath.Join(dir, "root")
	args := []string{
		"--root-directory", root,
		"--secure-port", strconv.Itoa(ports[0]),
		"--embedded-etcd-client-port", strconv.Itoa(ports[1]),
		"--embedded-etcd-peer-port", strconv.Itoa(ports[2]),
	}
	base := "https://127.0.0.1:" + strconv.Itoa(ports[0])
	kubeconfig := filepath.Join(root, "cache.kubeconfig")
	cacheDir := filepath.Join(dir, "kubectl-cache")
	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cacheDir, "--server", base + "/services/cache/shards/s/clusters/c"}, args...)
		cmd := exec.CommandContext(t.Context(), kubectl, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}

	p := start(t, bin, args, filepath.Join(dir, "first.log"))
	waitReady(t, kubeconfig, filepath.Join(dir, "first.log"))
	manifest := filepath.Join(dir, "export.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata:
  name: cowboys
  uid: 6f0d9f36-0000-4000-8000-000000000001
  annotations:
    kcp.io/path: root:org
spec:
  latestResourceSchemas: [today.cowboys.wildwest.dev]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// No OpenAPI is served: kubectl cannot validate on the client.
	run("create", "--validate=false", "-f", manifest)
	if got := run("get", "apiexports", "-o", "name"); got != "apiexport.apis.kcp.io/cowboys" {
		t.Fatalf("kubectl get apiexports: got %q", got)
	}

	if err := p.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait()

	start(t, bin, args, filepath.Join(dir, "second.log"))
	waitReady(t, kubeconfig, filepath.Join(dir, "second.log"))
	got := run("get", "apiexports", "cowboys", "-o", "jsonpath={.metadata.uid} {.metadata.annotations.kcp\\.io/path} {.metadata.annotations.kcp\\.io/cluster} {.spec.latestResourceSchemas[0]}")
	if want := "6f0d9f36-0000-4000-8000-000000000001 root:org c today.cowboys.wildwest.dev"; got != want {
		t.Errorf("after SIGKILL and restart: got %q, want %q", got, want)
	}
}

// start runs the binary with its output in logFile; the process is killed
// when the test ends.
func start(t *testing.T, bin string, args []string, logFile string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		_ = log.Close()
	})
	return cmd
}

// waitReady waits until /readyz answers 200 to the admin of the generated
// kubeconfig.
func waitReady(t *testing.T, kubeconfig, logFile string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: "base"}).ClientConfig()
		if err != nil {
			last = err
			continue
		}
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
		resp, err := client.Do(req)
		if err != nil {
			last = err
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		last = &httpStatus{resp.StatusCode}
	}
	out, _ := os.ReadFile(logFile)
	t.Fatalf("not ready within 2 minutes: %v\n%s", last, out)
}

type httpStatus struct{ code int }

func (s *httpStatus) Error() string { return "HTTP " + strconv.Itoa(s.code) }
