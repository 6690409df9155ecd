package integration

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestBinaryServesAndStopsOnSIGTERM runs `tessera start` as a process: it
// announces etcd, its URL, its kubeconfig and readiness, serves kubectl, and
// exits cleanly on SIGTERM, soon even while a client watches (a watch does
// not hold a rolling restart for the 60 s of the shutdown timeout).
func TestBinaryServesAndStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tessera")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/tessera-dev/tessera/cmd/tessera").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ports := make([]string, 3)
	for i := range ports {
		p, err := etcd.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = strconv.Itoa(p)
	}
	root := filepath.Join(dir, "root")
	cmd := exec.Command(bin, "start", "--root-directory", root, "--secure-port", ports[0],
		"--embedded-etcd-client-port", ports[1], "--embedded-etcd-peer-port", ports[2])
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	seen := map[string]bool{}
	want := []string{"Embedded etcd is up", "serving at https://127.0.0.1:" + ports[0], "admin.kubeconfig", `"Ready"`}
	deadline := time.After(2 * time.Minute)
	for len(seen) < len(want) {
		select {
		case l := <-lines:
			for _, w := range want {
				if strings.Contains(l, w) {
					seen[w] = true
				}
			}
		case err := <-exited:
			t.Fatalf("tessera exited early: %v", err)
		case <-deadline:
			t.Fatalf("tessera did not announce all of %q, saw %v", want, seen)
		}
	}

	kubeconfig := filepath.Join(root, "admin.kubeconfig")
	if out, err := framework.RunKubectl("--kubeconfig", kubeconfig, "get", "namespaces"); err != nil || !strings.Contains(out, "default") {
		t.Fatalf("kubectl against the process: %v\n%s", err, out)
	}

	watch := exec.Command(framework.KubectlPath(t), "--kubeconfig", kubeconfig, "get", "configmaps", "-A", "--watch")
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watch.Process.Kill(); _ = watch.Wait() })
	time.Sleep(time.Second)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("tessera did not exit cleanly on SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("tessera did not stop within 20 s of SIGTERM while a watch was open")
	}
}
