package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// raw sends a request with the given client and returns the status code and
// the decoded Status, if the body is one.
func raw(t *testing.T, client *http.Client, method, url, contentType string, body []byte) (int, metav1.Status) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st metav1.Status
	_ = json.Unmarshal(data, &st)
	return resp.StatusCode, st
}

func httpClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBadInputGetsAStatus(t *testing.T) {
	s := framework.StartShard(t)
	createCluster(t, s, "bad-input")
	admin := httpClient(t, s.Config(""))
	cm := func(name string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name))
	}
	base := s.URL + "/clusters/bad-input"
	for _, tc := range []struct {
		name, method, url, contentType string
		body                           []byte
		code                           int
		reason                         metav1.StatusReason
	}{
		{"malformed cluster name", "GET", s.URL + "/clusters/Not_Valid/api/v1/namespaces", "", nil, 400, metav1.StatusReasonBadRequest},
		{"empty cluster name", "GET", s.URL + "/clusters//api/v1/namespaces", "", nil, 400, metav1.StatusReasonBadRequest},
		{"cluster that does not exist", "GET", s.URL + "/clusters/nowhere/api/v1/namespaces", "", nil, 403, metav1.StatusReasonForbidden},
		{"invalid object name", "POST", base + "/api/v1/namespaces/default/configmaps", "application/json", cm("Not_Valid"), 422, metav1.StatusReasonInvalid},
		{"malformed body", "POST", base + "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"kind":`), 400, metav1.StatusReasonBadRequest},
		{"wrong content type", "POST", base + "/api/v1/namespaces/default/configmaps", "text/plain", cm("x"), 415, metav1.StatusReasonUnsupportedMediaType},
		{"unknown resource", "GET", base + "/api/v1/widgets", "", nil, 404, metav1.StatusReasonNotFound},
		{"unknown group", "GET", base + "/apis/nothing.example.com/v1/things", "", nil, 404, metav1.StatusReasonNotFound},
		{"oversized body", "POST", base + "/api/v1/namespaces/default/configmaps", "application/json",
			[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"x":"` + strings.Repeat("x", 4*1024*1024) + `"}}`), 413, metav1.StatusReasonRequestEntityTooLarge},
		{"configmap over 1 MiB", "POST", base + "/api/v1/namespaces/default/configmaps", "application/json",
			[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"x":"` + strings.Repeat("x", 1100*1024) + `"}}`), 422, metav1.StatusReasonInvalid},
		{"malformed resourceVersion", "GET", base + "/api/v1/namespaces/default/configmaps?resourceVersion=abc", "", nil, 400, metav1.StatusReasonBadRequest},
		{"malformed resourceVersion on a watch", "GET", base + "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=abc", "", nil, 400, metav1.StatusReasonBadRequest},
		{"malformed resourceVersion on a get", "GET", base + "/api/v1/namespaces/default/configmaps/x?resourceVersion=-1", "", nil, 400, metav1.StatusReasonBadRequest},
		{"object in a missing namespace", "POST", base + "/api/v1/namespaces/missing/configmaps", "application/json", cm("x"), 404, metav1.StatusReasonNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, st := raw(t, admin, tc.method, tc.url, tc.contentType, tc.body)
			if code != tc.code {
				t.Errorf("status code %d, want %d (%s)", code, tc.code, st.Message)
			}
			if st.Kind != "Status" || st.Reason != tc.reason {
				t.Errorf("got Status kind=%q reason=%q message=%q, want reason %q", st.Kind, st.Reason, st.Message, tc.reason)
			}
		})
	}
}

func TestWildcard(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "user-token,user-1,u1,team"))
	for _, c := range []logicalcluster.Name{"wild-a", "wild-b"} {
		createCluster(t, s, c)
		if _, err := kube(t, s, c).CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "same-name"}, Data: map[string]string{"in": string(c)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all := kube(t, s, logicalcluster.Wildcard).CoreV1().ConfigMaps("")

	list, err := all.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name == "same-name" {
			seen[cm.Annotations[logicalcluster.AnnotationKey]] = cm.Data["in"]
		}
	}
	if seen["wild-a"] != "wild-a" || seen["wild-b"] != "wild-b" {
		t.Errorf("wildcard list: same-named configmaps by cluster = %v", seen)
	}

	w, err := all.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := kube(t, s, "wild-b").CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !ok || cm.Name != "later" || cm.Annotations[logicalcluster.AnnotationKey] != "wild-b" {
			t.Errorf("wildcard watch event: %v %#v", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no wildcard watch event")
	}

	admin := httpClient(t, s.Config(""))
	code, st := raw(t, admin, "GET", s.URL+"/clusters/*/api/v1/namespaces/default/configmaps", "", nil)
	if code != 400 || st.Reason != metav1.StatusReasonBadRequest {
		t.Errorf("namespaced wildcard: %d %q", code, st.Message)
	}
	code, st = raw(t, admin, "POST", s.URL+"/clusters/*/api/v1/namespaces", "application/json", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}`))
	if code != 400 || st.Reason != metav1.StatusReasonBadRequest {
		t.Errorf("wildcard create: %d %q", code, st.Message)
	}

	// Field selectors narrow a wildcard list and watch; they do not turn it
	// into a request for one cluster.
	byName, err := kube(t, s, logicalcluster.Wildcard).CoreV1().ConfigMaps("").List(t.Context(), metav1.ListOptions{FieldSelector: "metadata.namespace=default,metadata.name=same-name"})
	if err != nil {
		t.Fatalf("wildcard list with a field selector: %v", err)
	}
	if len(byName.Items) != 2 {
		t.Errorf("wildcard list with a field selector returned %d configmaps, want 2", len(byName.Items))
	}
	nsWatch, err := kube(t, s, logicalcluster.Wildcard).CoreV1().Namespaces().Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=default", ResourceVersion: byName.ResourceVersion})
	if err != nil {
		t.Fatalf("wildcard watch with a field selector: %v", err)
	}
	nsWatch.Stop()

	userCfg := rest.AnonymousClientConfig(s.Config(logicalcluster.Wildcard))
	userCfg.BearerToken = "user-token"
	_, err = kube(t, s, "wild-a").CoreV1().ConfigMaps("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, st = raw(t, httpClient(t, userCfg), "GET", s.URL+"/clusters/*/api/v1/configmaps", "", nil)
	if code != 403 || st.Reason != metav1.StatusReasonForbidden {
		t.Errorf("wildcard list by a non-admin: %d %q, want 403", code, st.Message)
	}
}

func TestWatchResumesFromResourceVersion(t *testing.T) {
	s := framework.StartShard(t)
	createCluster(t, s, "watcher")
	cms := kube(t, s, "watcher").CoreV1().ConfigMaps("default")
	first, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "two"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != watch.Added || cm.Name != "two" {
			t.Errorf("resumed watch: first event %v %#v, want ADDED two", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the resumed watch saw nothing")
	}

	// A list at resourceVersion 0 is served from the watch cache; an exact
	// match at an older revision is honoured.
	if _, err := cms.List(t.Context(), metav1.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Errorf("list at rv=0: %v", err)
	}
	l, err := cms.List(t.Context(), metav1.ListOptions{ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Errorf("list at an exact older rv: %v", err)
	} else if len(l.Items) != 1 || l.Items[0].Name != "one" {
		t.Errorf("list at the rv of the first create returned %d items", len(l.Items))
	}
}

func TestRestartKeepsData(t *testing.T) {
	s := framework.StartShard(t)
	createCluster(t, s, "durable")
	if _, err := kube(t, s, "durable").CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Start()
	cm, err := kube(t, s, "durable").CoreV1().ConfigMaps("default").Get(t.Context(), "kept", metav1.GetOptions{})
	if err != nil || cm.Data["v"] != "1" {
		t.Fatalf("after a restart: %v %v", cm, err)
	}
	if out := s.MustKubectl(t, "root", "get", "logicalcluster", "cluster", "-o", "jsonpath={.status.phase}"); out != "Ready" {
		t.Errorf("root after restart: phase %q", out)
	}

	// The new watch cache starts at the current revision: a watch from an
	// older revision is told 410 Gone, so that the client relists.
	old, err := kube(t, s, "durable").CoreV1().ConfigMaps("default").Watch(t.Context(), metav1.ListOptions{ResourceVersion: "2"})
	if err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Errorf("watch from a too old rv: %v, want 410", err)
		}
		return
	}
	defer old.Stop()
	select {
	case ev := <-old.ResultChan():
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok || st.Code != http.StatusGone {
			t.Errorf("watch from a too old rv: first event %v %#v, want ERROR 410", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a watch from a too old rv got no event")
	}
}

// TestClusterAnnotationCannotBeForged checks that kcp.io/cluster always names
// the cluster an object is stored in, whatever a client sends.
func TestClusterAnnotationCannotBeForged(t *testing.T) {
	s := framework.StartShard(t)
	createCluster(t, s, "honest")
	createCluster(t, s, "victim")
	cms := kube(t, s, "honest").CoreV1().ConfigMaps("default")
	cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "forged",
		Annotations: map[string]string{logicalcluster.AnnotationKey: "victim"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Annotations[logicalcluster.AnnotationKey]; got != "honest" {
		t.Errorf("create with a forged annotation stored kcp.io/cluster=%q", got)
	}
	cm.Annotations = nil
	if cm, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := cm.Annotations[logicalcluster.AnnotationKey]; got != "honest" {
		t.Errorf("an update without annotations left kcp.io/cluster=%q", got)
	}
	s.MustKubectl(t, "honest", "-n", "default", "annotate", "--overwrite", "configmap", "forged", "kcp.io/cluster=victim")
	if got := s.MustKubectl(t, "honest", "-n", "default", "get", "configmap", "forged", "-o", `jsonpath={.metadata.annotations.kcp\.io/cluster}`); got != "honest" {
		t.Errorf("kubectl annotate changed kcp.io/cluster to %q", got)
	}
	if _, err := kube(t, s, "victim").CoreV1().ConfigMaps("default").Get(t.Context(), "forged", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the forged configmap shows up in the victim cluster: %v", err)
	}
}

// TestNonAdminLimits checks what an authenticated user who is not a shard
// admin may not do, until the kcp authorizer chain lands: touch system
// clusters, change LogicalClusters, impersonate.
func TestNonAdminLimits(t *testing.T) {
	s := framework.StartShard(t, withTokens(t, "user-token,user-1,u1,team"))
	createCluster(t, s, "team")
	userCfg := rest.AnonymousClientConfig(s.Config("team"))
	userCfg.BearerToken = "user-token"
	user := httpClient(t, userCfg)
	bindClusterRole(t, s, "team", "", "user-1-admin", "cluster-admin", authzUser("user-1"))
	eventually(t, authzTimeout, "user-1 to administer team", func(context.Context) (bool, error) {
		code, _ := raw(t, user, "GET", s.URL+"/clusters/team/api/v1/namespaces", "", nil)
		return code == 200, nil
	})

	for _, tc := range []struct {
		name, method, url string
		code              int
	}{
		{"read content of a cluster", "GET", s.URL + "/clusters/team/api/v1/namespaces", 200},
		{"read its LogicalCluster", "GET", s.URL + "/clusters/team/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", 200},
		{"delete its LogicalCluster", "DELETE", s.URL + "/clusters/team/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", 403},
		{"read the system:admin cluster", "GET", s.URL + "/clusters/system:admin/api/v1/namespaces", 403},
		{"read the shard root", "GET", s.URL + "/api/v1/namespaces", 403},
		{"health is public", "GET", s.URL + "/clusters/system:admin/readyz", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, st := raw(t, user, tc.method, tc.url, "", nil)
			if code != tc.code {
				t.Errorf("%s %s: %d (%s), want %d", tc.method, tc.url, code, st.Message, tc.code)
			}
		})
	}

	imp := rest.CopyConfig(userCfg)
	imp.Impersonate = rest.ImpersonationConfig{UserName: "someone", Groups: []string{"system:masters"}}
	code, st := raw(t, httpClient(t, imp), "GET", s.URL+"/clusters/team/api/v1/namespaces", "", nil)
	if code != 403 {
		t.Errorf("impersonating system:masters: %d (%s), want 403", code, st.Message)
	}
	code, _ = raw(t, httpClient(t, s.Config("")), "GET", s.URL+"/readyz/etcd", "", nil)
	if code != 200 {
		t.Errorf("/readyz/etcd: %d", code)
	}
}

// TestKubectlCreatesALogicalCluster: a shard admin brings a cluster into
// being with plain kubectl, which first reads discovery and OpenAPI.
func TestKubectlCreatesALogicalCluster(t *testing.T) {
	s := framework.StartShard(t)
	lc := writeFile(t, "lc.yaml", "apiVersion: core.kcp.io/v1alpha1\nkind: LogicalCluster\nmetadata:\n  name: cluster\n")
	s.MustKubectl(t, "fresh", "create", "-f", lc)
	eventually(t, 30*time.Second, "the default namespace of the new cluster", func(ctx context.Context) (bool, error) {
		out, err := s.Kubectl("fresh", "get", "namespace", "default", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "namespace/default", nil
	})
}
