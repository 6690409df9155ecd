package app_test

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

const schema = `apiVersion: apis.kcp.io/v1alpha1
kind: APIResourceSchema
metadata:
  name: today.widgets.example.dev
spec:
  group: example.dev
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const export = `apiVersion: apis.kcp.io/v1alpha1
kind: APIExport
metadata:
  name: example.dev
spec:
  latestResourceSchemas: [today.widgets.example.dev]
`

// TestBinary builds tessera-virtual-workspaces, runs it as a process
// beside an in-process shard with the flags a deployment uses, lists an
// export's (empty) content with kubectl through it as kcp-admin, and stops
// it with SIGTERM.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	kubectl := framework.KubectlPath(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "tessera-virtual-workspaces")
	build := exec.Command("go", "build", "-o", bin, "github.com/tessera-dev/tessera/cmd/tessera-virtual-workspaces")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	s := framework.StartShard(t)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s.MustKubectl(t, "root", "apply", "-f", write("schema.yaml", schema))
	s.MustKubectl(t, "root", "apply", "-f", write("export.yaml", export))

	port, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	logFile := filepath.Join(dir, "vw.log")
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(bin,
		"--kubeconfig", s.Kubeconfig, "--context", "shard-base", "--shard-name", "root",
		"--root-directory", root, "--secure-port", strconv.Itoa(port),
		"--client-ca-file", filepath.Join(s.Options.RootDirectory, "certs", "ca.crt"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	caFile := filepath.Join(root, "certs", "ca.crt")
	fail := func(format string, args ...any) {
		t.Helper()
		out, _ := os.ReadFile(logFile)
		t.Fatalf(format+"\n--- log:\n%s", append(args, out)...)
	}

	deadline := time.Now().Add(time.Minute)
	var last string
	for {
		if roots, err := certutil.NewPool(caFile); err == nil {
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}, Timeout: 5 * time.Second}
			resp, err := client.Get(base + "/readyz")
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				last = resp.Status
			} else {
				last = err.Error()
			}
		}
		if time.Now().After(deadline) {
			fail("not ready within a minute: %s", last)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The export gets its identity shortly after it is created.
	deadline = time.Now().Add(30 * time.Second)
	for {
		c := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", s.Kubeconfig, "--context", "base",
			"--server", base+"/services/apiexport/root/example.dev/clusters/*", "--certificate-authority", caFile,
			"--cache-dir", filepath.Join(dir, "kubectl-cache"), "get", "widgets", "-A")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		_, err := c.Output()
		if err == nil && strings.Contains(stderr.String(), "No resources found") {
			break
		}
		if time.Now().After(deadline) {
			fail("kubectl get widgets through the binary: %v\n%s", err, stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fail("exit after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		fail("did not exit within a minute of SIGTERM")
	}
}
