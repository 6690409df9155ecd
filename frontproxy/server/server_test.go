package server_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const selfSubjectReview = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

// TestFrontProxy runs kubectl and plain HTTPS clients through a front-proxy
// in front of a shard: routing of workspace paths, authentication,
// identity headers, cache invalidation and a shard going down.
func TestFrontProxy(t *testing.T) {
	// A long TTL: only the Workspace watch can make deletions visible.
	e := start(t, time.Hour)

	org := e.createWorkspace(t, logicalcluster.Root, "org")
	team := e.createWorkspace(t, logicalcluster.Name(org.Spec.Cluster), "team")
	teamCluster := logicalcluster.Name(team.Spec.Cluster)
	e.grantAdmin(t, teamCluster, "alice")
	e.grantAccess(t, teamCluster, "bob")
	alice := e.kubeconfig(t, "alice")

	t.Run("kubectl gets, creates and watches configmaps in root:org:team", func(t *testing.T) {
		if out, err := e.kubectl(t, alice, "root:org:team", "get", "configmaps", "-A"); err != nil {
			t.Fatalf("kubectl get: %v\n%s", err, out)
		}
		if out, err := e.kubectl(t, alice, "root:org:team", "create", "configmap", "made-by-alice", "--from-literal=k=v"); err != nil {
			t.Fatalf("kubectl create: %v\n%s", err, out)
		}
		// The shard has it in the team's logical cluster.
		if _, err := e.kube(t, teamCluster).CoreV1().ConfigMaps("default").Get(t.Context(), "made-by-alice", metav1.GetOptions{}); err != nil {
			t.Fatalf("the configmap is not in %s: %v", teamCluster, err)
		}

		cmd := e.kubectlCmd(t, alice, "root:org:team", "get", "configmaps", "--watch", "--output=name")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// The initial list, then an event for a configmap created later.
		waitLine(t, lines, "configmap/made-by-alice", 30*time.Second)
		if _, err := e.kube(t, teamCluster).CoreV1().ConfigMaps("default").Create(t.Context(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitLine(t, lines, "configmap/watched", 10*time.Second)
	})

	aliceClient := e.httpClient(t, ptr(e.clientCert(t, "alice")))
	bob := e.clientCert(t, "bob")
	bobClient := e.httpClient(t, &bob)

	t.Run("a logical cluster name routes to its shard", func(t *testing.T) {
		code, body := e.do(t, aliceClient, http.MethodGet, "/clusters/"+string(teamCluster)+"/api/v1/namespaces/default/configmaps/made-by-alice", nil, nil)
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
	})

	t.Run("paths without /clusters go to root", func(t *testing.T) {
		if code, body := e.do(t, aliceClient, http.MethodGet, "/version", nil, nil); code != http.StatusOK || !strings.Contains(body, "gitVersion") {
			t.Fatalf("status %d: %s", code, body)
		}
	})

	t.Run("a user without rights gets 403 from the shard", func(t *testing.T) {
		code, body := e.do(t, bobClient, http.MethodGet, "/clusters/root:org:team/api/v1/namespaces/default/configmaps", nil, nil)
		if code != http.StatusForbidden || !strings.Contains(body, `User \"bob\"`) {
			t.Fatalf("status %d, want 403 for bob: %s", code, body)
		}
	})

	t.Run("identity headers of clients are not believed", func(t *testing.T) {
		forged := http.Header{
			"X-Remote-User":         {"alice"},
			"X-Remote-Group":        {"system:masters"},
			"X-Remote-Extra-Scopes": {"cluster:" + string(teamCluster)},
		}
		code, body := e.do(t, bobClient, http.MethodPost, "/clusters/root:org:team/apis/authentication.k8s.io/v1/selfsubjectreviews", forged, strings.NewReader(selfSubjectReview))
		if code != http.StatusCreated {
			t.Fatalf("status %d: %s", code, body)
		}
		u := reviewedUser(t, body)
		if u.Username != "bob" || contains(u.Groups, "system:masters") || len(u.Extra["scopes"]) != 0 {
			t.Errorf("the shard saw %+v, want bob alone", u)
		}
		code, body = e.do(t, bobClient, http.MethodGet, "/clusters/root:org:team/api/v1/namespaces/default/configmaps", forged, nil)
		if code != http.StatusForbidden {
			t.Errorf("forged headers: status %d, want 403: %s", code, body)
		}
	})

	t.Run("system:masters in a client certificate is dropped", func(t *testing.T) {
		mallory := e.clientCert(t, "mallory", "system:masters")
		code, body := e.do(t, e.httpClient(t, &mallory), http.MethodGet, "/clusters/root:org:team/api/v1/namespaces/default/configmaps", nil, nil)
		if code != http.StatusForbidden {
			t.Fatalf("status %d, want 403: %s", code, body)
		}
	})

	t.Run("impersonation is authorized by the shard as the real user", func(t *testing.T) {
		code, body := e.do(t, bobClient, http.MethodGet, "/clusters/root:org:team/api/v1/namespaces/default/configmaps", http.Header{"Impersonate-User": {"alice"}}, nil)
		if code != http.StatusForbidden || !strings.Contains(body, "impersonate") {
			t.Fatalf("status %d, want 403 on impersonation: %s", code, body)
		}
	})

	t.Run("unauthenticated requests get 401", func(t *testing.T) {
		anonymous := e.httpClient(t, nil)
		code, body := e.do(t, anonymous, http.MethodGet, "/clusters/root:org:team/api", nil, nil)
		if code != http.StatusUnauthorized || !strings.Contains(body, `"kind":"Status"`) {
			t.Fatalf("status %d, want a 401 Status: %s", code, body)
		}
		rogue := newSigner(t, "rogue")
		c, k := rogue.issue(t, "alice", nil, x509.ExtKeyUsageClientAuth)
		cert := mustKeyPair(t, c, k)
		if code, body := e.do(t, e.httpClient(t, &cert), http.MethodGet, "/clusters/root:org:team/api", nil, nil); code != http.StatusUnauthorized {
			t.Fatalf("certificate of an unknown CA: status %d, want 401: %s", code, body)
		}
		if code, body := e.do(t, anonymous, http.MethodGet, "/clusters/root:org:team/api", http.Header{"Authorization": {"Bearer not-a-token"}}, nil); code != http.StatusUnauthorized {
			t.Fatalf("unknown bearer token: status %d, want 401 from the shard: %s", code, body)
		}
		if code, body := e.do(t, anonymous, http.MethodGet, "/clusters/root:org:team/api", http.Header{"Authorization": {"Basic YWxpY2U6cHc="}}, nil); code != http.StatusUnauthorized {
			t.Fatalf("basic auth: status %d, want 401: %s", code, body)
		}
	})

	t.Run("a service account token is passed on for the shard to check", func(t *testing.T) {
		kube := e.kube(t, teamCluster)
		if _, err := kube.CoreV1().ServiceAccounts("default").Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var token string
		eventually(t, 30*time.Second, "a token for the service account", func(ctx context.Context) (bool, error) {
			tr, err := kube.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			token = tr.Status.Token
			return true, nil
		})
		e.grantAccess(t, teamCluster, "system:serviceaccount:default:robot")
		anonymous := e.httpClient(t, nil)
		bearer := http.Header{"Authorization": {"Bearer " + token}}
		code, body := e.do(t, anonymous, http.MethodPost, "/clusters/root:org:team/apis/authentication.k8s.io/v1/selfsubjectreviews", bearer, strings.NewReader(selfSubjectReview))
		if code != http.StatusCreated {
			t.Fatalf("status %d: %s", code, body)
		}
		if u := reviewedUser(t, body); u.Username != "system:serviceaccount:default:robot" {
			t.Errorf("the shard saw %+v", u)
		}
		// The token is only valid in the logical cluster that issued it.
		if code, body := e.do(t, anonymous, http.MethodGet, "/clusters/root:org/api", bearer, nil); code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Errorf("the token in another workspace: status %d, want 401 or 403: %s", code, body)
		}
	})

	t.Run("wildcard and system clusters are refused", func(t *testing.T) {
		for _, p := range []string{"/clusters/*/api/v1/configmaps", "/clusters/%2A/api/v1/configmaps", "/clusters/system:admin/api/v1/configmaps"} {
			if code, body := e.do(t, aliceClient, http.MethodGet, p, nil, nil); code != http.StatusForbidden {
				t.Errorf("%s: status %d, want 403: %s", p, code, body)
			}
		}
		if code, body := e.do(t, aliceClient, http.MethodGet, "/clusters/Not_Valid/api", nil, nil); code != http.StatusBadRequest {
			t.Errorf("invalid path: status %d, want 400: %s", code, body)
		}
	})

	t.Run("unknown paths get 404", func(t *testing.T) {
		for _, p := range []string{"/clusters/root:org:nope/api", "/clusters/root:nope:team/api", "/clusters/nosuchcluster/api"} {
			if code, body := e.do(t, aliceClient, http.MethodGet, p, nil, nil); code != http.StatusNotFound || !strings.Contains(body, `"reason":"NotFound"`) {
				t.Errorf("%s: status %d, want a 404 Status: %s", p, code, body)
			}
		}
	})

	t.Run("a deleted workspace stops being routed within a second", func(t *testing.T) {
		orgCluster := logicalcluster.Name(org.Spec.Cluster)
		gone := e.createWorkspace(t, orgCluster, "gone")
		e.grantAdmin(t, logicalcluster.Name(gone.Spec.Cluster), "alice")
		eventually(t, 30*time.Second, "root:org:gone to be served", func(ctx context.Context) (bool, error) {
			code, _ := e.do(t, aliceClient, http.MethodGet, "/clusters/root:org:gone/api/v1/namespaces/default/configmaps", nil, nil)
			return code == http.StatusOK, nil
		})
		if err := e.kcp(t, orgCluster).Workspaces().Delete(t.Context(), "gone", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "the workspace to be gone from the shard", func(ctx context.Context) (bool, error) {
			_, err := e.kcp(t, orgCluster).Workspaces().Get(ctx, "gone", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		deadline := time.Now().Add(time.Second)
		for {
			code, body := e.do(t, aliceClient, http.MethodGet, "/clusters/root:org:gone/api/v1/namespaces/default/configmaps", nil, nil)
			if code == http.StatusNotFound {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a second after the deletion: status %d, want 404: %s", code, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("a stopped shard gives 503", func(t *testing.T) {
		// The shard stops listening at once, but its shutdown waits for
		// the proxy's watches, which end with the proxy.
		stopped := make(chan struct{})
		go func() {
			e.shard.Stop()
			close(stopped)
		}()
		defer func() {
			e.stopProxy(t)
			<-stopped
		}()
		for _, p := range []string{"/clusters/root:org:team/api", "/clusters/root:org:never-seen/api", "/clusters/" + string(teamCluster) + "/api"} {
			eventually(t, 30*time.Second, p+" to answer 503", func(ctx context.Context) (bool, error) {
				code, body := e.do(t, aliceClient, http.MethodGet, p, nil, nil)
				if code != http.StatusServiceUnavailable || !strings.Contains(body, `"kind":"Status"`) {
					return false, fmt.Errorf("status %d: %s", code, body)
				}
				return true, nil
			})
		}
	})
}

func waitLine(t *testing.T, lines <-chan string, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kubectl ended before printing %q", want)
			}
			if strings.TrimSpace(l) == want {
				return
			}
		case <-deadline:
			t.Fatalf("kubectl did not print %q within %v", want, timeout)
		}
	}
}

func reviewedUser(t *testing.T, body string) authenticationv1.UserInfo {
	t.Helper()
	var r authenticationv1.SelfSubjectReview
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return r.Status.UserInfo
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
