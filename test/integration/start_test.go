package integration

import (
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestExternalEtcd runs a shard on an etcd it does not own, and checks the
// key layout: /registry/<resource>/<cluster>/<namespace>/<name>.
func TestExternalEtcd(t *testing.T) {
	ports := make([]int, 2)
	for i := range ports {
		p, err := etcd.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	e, err := etcd.Start(t.Context(), etcd.Options{Dir: filepath.Join(t.TempDir(), "etcd"), ClientPort: ports[0], PeerPort: ports[1], UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := framework.StartShard(t, func(o *options.Options) { o.EtcdServers = []string{e.ClientURL} })
	if _, err := os.Stat(filepath.Join(s.Options.RootDirectory, "etcd-server")); !os.IsNotExist(err) {
		t.Errorf("a shard with --etcd-servers started an embedded etcd too (%v)", err)
	}
	createCluster(t, s, "ext")
	if _, err := kube(t, s, "ext").CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "layout"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, key := range []string{"/registry/configmaps/ext/default/layout", "/registry/namespaces/ext/default", "/registry/core.kcp.io/logicalclusters/ext/cluster"} {
		resp, err := c.Get(t.Context(), key, clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 1 {
			t.Errorf("etcd has no key %s", key)
		}
	}

	// A second shard on the same etcd with its own --etcd-prefix keeps its
	// keys apart: the same cluster name holds other objects.
	other := framework.StartShard(t, func(o *options.Options) {
		o.EtcdServers = []string{e.ClientURL}
		o.EtcdPrefix = "/tessera/other/registry"
	})
	createCluster(t, other, "ext")
	if _, err := kube(t, other, "ext").CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Get(t.Context(), "/tessera/other/registry/configmaps/ext/default/other", clientv3.WithCountOnly()); err != nil || resp.Count != 1 {
		t.Errorf("the second shard's ConfigMap is not under its prefix (%v)", err)
	}
	if _, err := kube(t, s, "ext").CoreV1().ConfigMaps("default").Get(t.Context(), "other", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the first shard sees the second shard's ConfigMap: %v", err)
	}
	if _, err := kube(t, other, "ext").CoreV1().ConfigMaps("default").Get(t.Context(), "layout", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the second shard sees the first shard's ConfigMap: %v", err)
	}
}

// TestAdminKubeconfig checks the contexts kcp users know.
func TestAdminKubeconfig(t *testing.T) {
	s := framework.StartShard(t)
	cfg, err := clientcmd.LoadFromFile(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "root" {
		t.Errorf("current context %q, want root", cfg.CurrentContext)
	}
	want := map[string]string{"root": s.URL + "/clusters/root", "base": s.URL, "system:admin": s.URL, "shard-base": s.URL}
	for ctxName, server := range want {
		c, ok := cfg.Contexts[ctxName]
		if !ok {
			t.Errorf("context %s missing", ctxName)
			continue
		}
		if got := cfg.Clusters[c.Cluster].Server; got != server {
			t.Errorf("context %s: server %s, want %s", ctxName, got, server)
		}
		if ctxName == "base" {
			// kcp-admin at the base URL: kcp's clients append
			// /clusters/<path>; system:admin is for shard admins.
			if out, err := runKubectl(s.Kubeconfig, "--context", ctxName, "get", "logicalcluster", "cluster"); err == nil || !strings.Contains(out, "Forbidden") {
				t.Errorf("kcp-admin read the system:admin cluster: %v\n%s", err, out)
			}
			out, err := runKubectl(s.Kubeconfig, "--context", ctxName, "--server", s.URL+"/clusters/root", "get", "logicalcluster", "cluster", "-o", "jsonpath={.metadata.annotations.kcp\\.io/path}")
			if err != nil || out != "root" {
				t.Errorf("kubectl --context base at /clusters/root: %v\n%s", err, out)
			}
			continue
		}
		out, err := runKubectl(s.Kubeconfig, "--context", ctxName, "get", "logicalcluster", "cluster", "-o", "jsonpath={.metadata.annotations.kcp\\.io/path}")
		if err != nil {
			t.Errorf("kubectl --context %s: %v\n%s", ctxName, err, out)
			continue
		}
		wantPath := "system:admin"
		if ctxName == "root" {
			wantPath = "root"
		}
		if out != wantPath {
			t.Errorf("context %s reaches logical cluster %q, want %q", ctxName, out, wantPath)
		}
	}
	// A restart reuses the certificates: the old kubeconfig keeps working.
	before, _ := os.ReadFile(filepath.Join(s.Options.RootDirectory, "certs", "ca.crt"))
	s.Stop()
	s.Start()
	after, _ := os.ReadFile(filepath.Join(s.Options.RootDirectory, "certs", "ca.crt"))
	if string(before) != string(after) {
		t.Errorf("the CA changed across a restart")
	}
	if out, err := runKubectl(s.Kubeconfig, "get", "ns"); err != nil || !strings.Contains(out, "default") {
		t.Errorf("after a restart: %v\n%s", err, out)
	}
}

func runKubectl(kubeconfig string, args ...string) (string, error) {
	out, err := framework.RunKubectl(append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if err != nil {
		return out, fmt.Errorf("%w", err)
	}
	return out, nil
}
