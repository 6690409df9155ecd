package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestJoinShard starts a root shard and a second shard, shard-1, that joins
// it with --root-shard-kubeconfig-file, both with one installation CA.
func TestJoinShard(t *testing.T) {
	caCert, caKey := framework.NewInstallationCA(t)
	root := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey))
	shard1 := framework.StartShard(t, framework.WithInstallationCA(caCert, caKey), framework.JoiningRoot(root, "shard-1"))
	rootKCP := kcpFor(t, root.Config(logicalcluster.Root))

	t.Run("registered in root", func(t *testing.T) {
		eventually(t, time.Minute, "Shard shard-1 in root", func(ctx context.Context) (bool, error) {
			sh, err := rootKCP.Shards().Get(ctx, "shard-1", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return sh.Spec.BaseURL == shard1.URL && sh.Spec.ExternalURL == shard1.URL && sh.Spec.VirtualWorkspaceURL == shard1.URL && sh.Labels["name"] == "shard-1", nil
		})
		out := root.MustKubectl(t, logicalcluster.Root, "get", "shards")
		for _, want := range []string{"root", "shard-1", shard1.URL} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl get shards in root does not show %q:\n%s", want, out)
			}
		}
	})

	t.Run("serves readyz with a certificate of the installation CA", func(t *testing.T) {
		client := httpsClient(t, caCert, certs.Pair{})
		resp, err := client.Get(shard1.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("shard-1 /readyz: %s", resp.Status)
		}
	})

	t.Run("no root logical cluster of its own", func(t *testing.T) {
		_, err := kcpFor(t, shard1.Config(logicalcluster.Root)).WorkspaceTypes().Get(t.Context(), "universal", metav1.GetOptions{})
		if err == nil {
			t.Errorf("shard-1 bootstrapped root's WorkspaceTypes")
		}
	})

	t.Run("same core identities as root", func(t *testing.T) {
		checkCoreIdentities(t, rootKCP, shard1, "before")
	})

	t.Run("shard client certificates of one shard are accepted by the other", func(t *testing.T) {
		for _, c := range []struct {
			from, to *framework.Shard
			user     string
		}{{root, shard1, "system:shard:root"}, {shard1, root, "system:shard:shard-1"}} {
			cfg := &rest.Config{Host: c.to.URL + "/clusters/" + string(logicalcluster.SystemAdmin), TLSClientConfig: rest.TLSClientConfig{
				CAFile: caCert, CertFile: c.from.Certs.ShardClient.CertFile, KeyFile: c.from.Certs.ShardClient.KeyFile,
			}}
			review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("%s's shard client certificate at %s: %v", c.from.Options.ShardName, c.to.Options.ShardName, err)
			}
			if u := review.Status.UserInfo; u.Username != c.user || !slices.Contains(u.Groups, "system:masters") {
				t.Errorf("%s's shard client certificate at %s is %s in %v, want %s in system:masters", c.from.Options.ShardName, c.to.Options.ShardName, u.Username, u.Groups, c.user)
			}
			// A shard admin may list across all logical clusters.
			wildcard := rest.CopyConfig(cfg)
			wildcard.Host = c.to.URL + "/clusters/*"
			if _, err := kcpFor(t, wildcard).LogicalClusters().List(t.Context(), metav1.ListOptions{}); err != nil {
				t.Errorf("%s's shard client certificate cannot list logical clusters on %s: %v", c.from.Options.ShardName, c.to.Options.ShardName, err)
			}
		}
	})

	t.Run("registered again when deleted", func(t *testing.T) {
		if err := rootKCP.Shards().Delete(t.Context(), "shard-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "Shard shard-1 back in root", func(ctx context.Context) (bool, error) {
			sh, err := rootKCP.Shards().Get(ctx, "shard-1", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil && sh.Spec.BaseURL == shard1.URL, err
		})
	})

	t.Run("restarts while root is down", func(t *testing.T) {
		ids := coreIdentityHashes(t, rootKCP)
		shard1.Stop()
		root.Stop()
		shard1.Start()
		checkCoreIdentitiesAre(t, ids, shard1, "after")
	})
}

func kcpFor(t *testing.T, cfg *rest.Config) *kcpclient.Clientset {
	t.Helper()
	c, err := kcpclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// httpsClient trusts caFile and presents client when it is set.
func httpsClient(t *testing.T, caFile string, client certs.Pair) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cfg := &tls.Config{RootCAs: pool}
	if client.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
}

// coreIdentityHashes are the identities of root's exports of kcp's APIs.
func coreIdentityHashes(t *testing.T, rootKCP *kcpclient.Clientset) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, name := range []string{"tenancy.kcp.io", "topology.kcp.io", "shards.core.kcp.io"} {
		e, err := rootKCP.APIExports().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if e.Status.IdentityHash == "" {
			t.Fatalf("APIExport root:%s has no identity", name)
		}
		ids[name] = e.Status.IdentityHash
	}
	return ids
}

func checkCoreIdentities(t *testing.T, rootKCP *kcpclient.Clientset, s *framework.Shard, suffix string) {
	t.Helper()
	checkCoreIdentitiesAre(t, coreIdentityHashes(t, rootKCP), s, suffix)
}

// checkCoreIdentitiesAre creates objects of kcp's APIs in system:admin on s
// and checks that s stores them under the identities ids.
func checkCoreIdentitiesAre(t *testing.T, ids map[string]string, s *framework.Shard, suffix string) {
	t.Helper()
	c := kcpFor(t, s.Config(logicalcluster.SystemAdmin))
	name := "probe-" + suffix
	if _, err := c.WorkspaceTypes().Create(t.Context(), &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Partitions().Create(t.Context(), &topologyv1alpha1.Partition{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://127.0.0.1:" + strconv.Itoa(s.Options.EmbeddedEtcdClientPort)}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	for _, key := range []string{
		"/registry/tenancy.kcp.io/workspacetypes/" + ids["tenancy.kcp.io"] + "/system:admin/" + name,
		"/registry/topology.kcp.io/partitions/" + ids["topology.kcp.io"] + "/system:admin/" + name,
	} {
		resp, err := etcd.Get(t.Context(), key, clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 1 {
			t.Errorf("%s does not store %s under root's identity", s.Options.ShardName, key)
		}
	}
	// Shards live in root only: their identity is seen in the copy the
	// shard keeps of root's identities.
	resp, err := etcd.Get(t.Context(), "/registry/tessera/root-identities")
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	if len(resp.Kvs) != 1 || json.Unmarshal(resp.Kvs[0].Value, &kept) != nil {
		t.Fatalf("%s keeps no copy of root's identities: %v", s.Options.ShardName, resp.Kvs)
	}
	if !maps.Equal(kept, ids) {
		t.Errorf("%s keeps the identities %v, root has %v", s.Options.ShardName, kept, ids)
	}
}
