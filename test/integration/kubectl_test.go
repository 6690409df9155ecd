package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestKubectlInTwoClusters drives the real kubectl through the verbs users
// know, in two logical clusters, and checks they never see each other.
func TestKubectlInTwoClusters(t *testing.T) {
	s := framework.StartShard(t)
	a, b := logicalcluster.Name("team-a"), logicalcluster.Name("team-b")
	createCluster(t, s, a)
	createCluster(t, s, b)

	for _, c := range []logicalcluster.Name{a, b} {
		s.MustKubectl(t, c, "create", "namespace", "shop")
		s.MustKubectl(t, c, "-n", "shop", "create", "configmap", "settings", "--from-literal=owner="+string(c))
		s.MustKubectl(t, c, "-n", "shop", "create", "secret", "generic", "creds", "--from-literal=user=u", "--from-literal=pass=p")
	}

	t.Run("get shows the columns users know", func(t *testing.T) {
		out := s.MustKubectl(t, a, "get", "namespaces")
		for _, col := range []string{"NAME", "STATUS", "AGE", "shop", "Active"} {
			if !strings.Contains(out, col) {
				t.Errorf("kubectl get ns lacks %q:\n%s", col, out)
			}
		}
		out = s.MustKubectl(t, a, "-n", "shop", "get", "secrets")
		for _, col := range []string{"NAME", "TYPE", "DATA", "AGE", "creds", "Opaque", "2"} {
			if !strings.Contains(out, col) {
				t.Errorf("kubectl get secrets lacks %q:\n%s", col, out)
			}
		}
		out = s.MustKubectl(t, a, "-n", "shop", "get", "cm")
		if !strings.Contains(out, "DATA") || !strings.Contains(out, "settings") {
			t.Errorf("kubectl get cm (short name):\n%s", out)
		}
	})

	t.Run("objects carry their cluster and stay in it", func(t *testing.T) {
		for _, c := range []logicalcluster.Name{a, b} {
			var cm struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
				Data map[string]string `json:"data"`
			}
			if err := json.Unmarshal([]byte(s.MustKubectl(t, c, "-n", "shop", "get", "configmap", "settings", "-o", "json")), &cm); err != nil {
				t.Fatal(err)
			}
			if cm.Data["owner"] != string(c) {
				t.Errorf("cluster %s sees the configmap of %s", c, cm.Data["owner"])
			}
			if cm.Metadata.Annotations[logicalcluster.AnnotationKey] != string(c) {
				t.Errorf("cluster %s: kcp.io/cluster = %q", c, cm.Metadata.Annotations[logicalcluster.AnnotationKey])
			}
		}
		s.MustKubectl(t, a, "-n", "shop", "create", "configmap", "only-in-a")
		if out, err := s.Kubectl(b, "-n", "shop", "get", "configmap", "only-in-a"); err == nil || !strings.Contains(out, "NotFound") {
			t.Errorf("cluster b sees a configmap of cluster a: %v\n%s", err, out)
		}
		s.MustKubectl(t, b, "delete", "namespace", "shop", "--wait=false")
		if out := s.MustKubectl(t, a, "get", "namespace", "shop", "-o", "jsonpath={.status.phase}"); out != "Active" {
			t.Errorf("deleting shop in b touched shop in a: phase %q", out)
		}
	})

	t.Run("client-side apply and strategic merge patch", func(t *testing.T) {
		dir := t.TempDir()
		manifest := filepath.Join(dir, "cm.yaml")
		write := func(data string) {
			if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: shop\n  labels:\n    app: web\ndata:\n"+data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("  a: \"1\"\n  b: \"2\"\n")
		s.MustKubectl(t, a, "apply", "-f", manifest)
		s.MustKubectl(t, a, "-n", "shop", "label", "configmap", "applied", "extra=kept")
		write("  a: \"10\"\n")
		s.MustKubectl(t, a, "apply", "-f", manifest)
		out := s.MustKubectl(t, a, "-n", "shop", "get", "configmap", "applied", "-o", "jsonpath={.data.a},{.data.b},{.metadata.labels.extra}")
		if out != "10,,kept" {
			t.Errorf("after re-apply: %q, want 10,,kept (b pruned by apply, label set outside apply kept)", out)
		}
		s.MustKubectl(t, a, "-n", "shop", "patch", "configmap", "applied", "--type=strategic", "-p", `{"data":{"c":"3"}}`)
		out = s.MustKubectl(t, a, "-n", "shop", "get", "configmap", "applied", "-o", "jsonpath={.data.a},{.data.c}")
		if out != "10,3" {
			t.Errorf("after strategic merge patch: %q", out)
		}
	})

	t.Run("server-side apply tracks managers and reports conflicts", func(t *testing.T) {
		manifest := filepath.Join(t.TempDir(), "ssa.yaml")
		if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: shop\ndata:\n  k: one\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s.MustKubectl(t, a, "apply", "--server-side", "--field-manager=alice", "-f", manifest)
		if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: shop\ndata:\n  k: two\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := s.Kubectl(a, "apply", "--server-side", "--field-manager=bob", "-f", manifest)
		if err == nil || !strings.Contains(out, "conflict") {
			t.Errorf("expected a conflict between alice and bob, got %v:\n%s", err, out)
		}
		s.MustKubectl(t, a, "apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", manifest)
		out = s.MustKubectl(t, a, "-n", "shop", "get", "configmap", "ssa", "-o", "jsonpath={.data.k} {.metadata.managedFields[*].manager}")
		if !strings.HasPrefix(out, "two ") || !strings.Contains(out, "bob") {
			t.Errorf("after forced apply: %q", out)
		}
	})

	t.Run("generateName finalizers deletionTimestamp and conflicts", func(t *testing.T) {
		cms := kube(t, s, a).CoreV1().ConfigMaps("shop")
		cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(cm.Name, "gen-") || len(cm.Name) <= len("gen-") {
			t.Errorf("generateName gave %q", cm.Name)
		}
		stale := cm.DeepCopy()
		cm.Data = map[string]string{"x": "1"}
		if cm, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		stale.Data = map[string]string{"x": "2"}
		if _, err := cms.Update(t.Context(), stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("update with a stale resourceVersion: %v, want 409 Conflict", err)
		}
		if err := cms.Delete(t.Context(), cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		held, err := cms.Get(t.Context(), cm.Name, metav1.GetOptions{})
		if err != nil || held.DeletionTimestamp == nil {
			t.Fatalf("a configmap with a finalizer should linger with a deletionTimestamp: %v %v", held, err)
		}
		held.Finalizers = nil
		if _, err := cms.Update(t.Context(), held, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Get(t.Context(), cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("after its finalizer was removed the configmap should be gone: %v", err)
		}
	})

	t.Run("field and label selectors", func(t *testing.T) {
		s.MustKubectl(t, a, "-n", "shop", "create", "configmap", "sel-1")
		s.MustKubectl(t, a, "-n", "shop", "label", "configmap", "sel-1", "tier=front")
		out := s.MustKubectl(t, a, "-n", "shop", "get", "configmaps", "-l", "tier=front", "-o", "name")
		if strings.TrimSpace(out) != "configmap/sel-1" {
			t.Errorf("label selector: %q", out)
		}
		out = s.MustKubectl(t, a, "-n", "shop", "get", "configmaps", "--field-selector", "metadata.name=settings", "-o", "name")
		if strings.TrimSpace(out) != "configmap/settings" {
			t.Errorf("field selector: %q", out)
		}
		out = s.MustKubectl(t, a, "-n", "shop", "get", "secrets", "--field-selector", "type=Opaque", "-o", "name")
		if strings.TrimSpace(out) != "secret/creds" {
			t.Errorf("secret type field selector: %q", out)
		}
	})

	t.Run("describe annotate replace edit and auth can-i", func(t *testing.T) {
		s.MustKubectl(t, b, "create", "namespace", "verbs")
		s.MustKubectl(t, b, "-n", "verbs", "create", "configmap", "v", "--from-literal=k=1")
		s.MustKubectl(t, b, "-n", "verbs", "annotate", "configmap", "v", "note=hello")
		if out := s.MustKubectl(t, b, "-n", "verbs", "describe", "configmap", "v"); !strings.Contains(out, "note: hello") && !strings.Contains(out, "note:") {
			t.Errorf("kubectl describe:\n%s", out)
		}
		manifest := filepath.Join(t.TempDir(), "replace.yaml")
		if err := os.WriteFile(manifest, []byte(s.MustKubectl(t, b, "-n", "verbs", "get", "configmap", "v", "-o", "yaml")), 0o600); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(manifest)
		if err := os.WriteFile(manifest, []byte(strings.Replace(string(data), "k: \"1\"", "k: \"2\"", 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		s.MustKubectl(t, b, "replace", "-f", manifest)
		if out := s.MustKubectl(t, b, "-n", "verbs", "get", "configmap", "v", "-o", "jsonpath={.data.k}"); out != "2" {
			t.Errorf("after replace: %q", out)
		}
		editor := filepath.Join(t.TempDir(), "editor.sh")
		if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/k: \"2\"/k: \"3\"/' \"$1\"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBE_EDITOR", editor)
		s.MustKubectl(t, b, "-n", "verbs", "edit", "configmap", "v")
		if out := s.MustKubectl(t, b, "-n", "verbs", "get", "configmap", "v", "-o", "jsonpath={.data.k}"); out != "3" {
			t.Errorf("after edit: %q", out)
		}
		if out := s.MustKubectl(t, b, "auth", "can-i", "create", "configmaps"); strings.TrimSpace(out) != "yes" {
			t.Errorf("kubectl auth can-i: %q", out)
		}
		if out := s.MustKubectl(t, b, "auth", "can-i", "--list"); !strings.Contains(out, "*.*") {
			t.Errorf("kubectl auth can-i --list:\n%s", out)
		}
	})

	t.Run("discovery explain and version", func(t *testing.T) {
		out := s.MustKubectl(t, a, "api-resources")
		for _, r := range []string{"configmaps", "namespaces", "secrets", "events", "limitranges", "resourcequotas", "serviceaccounts",
			"mutatingwebhookconfigurations", "validatingwebhookconfigurations", "customresourcedefinitions", "tokenreviews",
			"subjectaccessreviews", "certificatesigningrequests", "leases", "roles", "clusterrolebindings", "logicalclusters"} {
			if !strings.Contains(out, r) {
				t.Errorf("kubectl api-resources lacks %s", r)
			}
		}
		out = s.MustKubectl(t, a, "explain", "configmap.data")
		if !strings.Contains(out, "FIELD: data") && !strings.Contains(out, "data") {
			t.Errorf("kubectl explain configmap.data:\n%s", out)
		}
		out = s.MustKubectl(t, a, "version")
		if !strings.Contains(out, "Server Version: v1.37") {
			t.Errorf("kubectl version:\n%s", out)
		}
		out = s.MustKubectl(t, a, "auth", "whoami")
		if !strings.Contains(out, "shard-admin") {
			t.Errorf("kubectl auth whoami:\n%s", out)
		}
	})
}
