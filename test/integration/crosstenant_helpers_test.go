package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// tenants is a shard with two tenants, each the admin of its own
// workspace only: user-a of root:a-ws (the attacker) and user-b of
// root:b-ws (the victim). b-ws holds a Secret the attacker must never see.
type tenants struct {
	s *framework.Shard
	// a and b are the logical cluster names of the two workspaces.
	a, b logicalcluster.Name
	// tokens of the static users.
	tokens map[string]string
}

const (
	attackerToken = "user-a-token"
	victimToken   = "user-b-token"
	// victimSecretValue is the content of the victim's Secret; no answer
	// to the attacker may contain it.
	victimSecretValue = "the-victims-secret-value"
)

func startTenants(t *testing.T) *tenants {
	t.Helper()
	s := framework.StartShard(t, withTokens(t,
		attackerToken+",user-a,user-a-uid,\"team-a\"",
		victimToken+",user-b,user-b-uid,\"team-b\"",
		"user-l-token,user-l,user-l-uid",
	))
	a := createWorkspace(t, s, "root", "a-ws", nil)
	b := createWorkspace(t, s, "root", "b-ws", nil)
	tn := &tenants{s: s, a: logicalcluster.Name(a.Spec.Cluster), b: logicalcluster.Name(b.Spec.Cluster),
		tokens: map[string]string{"user-a": attackerToken, "user-b": victimToken}}
	bindClusterRole(t, s, tn.a, "", "user-a-admin", "cluster-admin", authzUser("user-a"))
	bindClusterRole(t, s, tn.b, "", "user-b-admin", "cluster-admin", authzUser("user-b"))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "victim"}, StringData: map[string]string{"password": victimSecretValue}}
	if _, err := kube(t, s, tn.b).CoreV1().Secrets("default").Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for user, cluster := range map[string]logicalcluster.Name{"user-a": tn.a, "user-b": tn.b} {
		eventuallyAllowed(t, user+" administers its workspace", func(ctx context.Context) error {
			_, err := tokenClient(t, s, cluster, tn.tokens[user]).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
			return err
		})
	}
	return tn
}

// rawRequest is one HTTP request of a tenant against the shard.
type rawRequest struct {
	method      string
	path        string // after /clusters/<cluster>
	body        string
	contentType string
	header      http.Header
}

// rawResponse is what came back.
type rawResponse struct {
	code int
	body string
	// status is the decoded Status of a failure, if the body is one.
	status metav1.Status
}

// do sends r as the holder of token to /clusters/<cluster><r.path>.
// Watches are cut after a second; their code is what tells.
func (tn *tenants) do(t *testing.T, token, cluster string, r rawRequest) rawResponse {
	t.Helper()
	cfg := rest.AnonymousClientConfig(tn.s.Config(""))
	cfg.BearerToken = token
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tn.doWith(t, client, cluster, r)
}

// doWith sends r with client.
func (tn *tenants) doWith(t *testing.T, client *http.Client, cluster string, r rawRequest) rawResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, tn.s.URL+"/clusters/"+cluster+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	for k, vs := range r.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, req.URL, err)
	}
	defer resp.Body.Close()
	readCtx, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	data := readSome(readCtx, resp.Body)
	out := rawResponse{code: resp.StatusCode, body: string(data)}
	_ = json.Unmarshal(data, &out.status)
	return out
}

// readSome reads a body until it ends or ctx is done (for watches).
func readSome(ctx context.Context, r io.ReadCloser) []byte {
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, 1<<20))
		done <- b
	}()
	select {
	case b := <-done:
		return b
	case <-ctx.Done():
		_ = r.Close()
		return <-done
	}
}

// impersonating returns the headers that impersonate user with groups.
func impersonating(user string, groups ...string) http.Header {
	h := http.Header{"Impersonate-User": {user}}
	for _, g := range groups {
		h.Add("Impersonate-Group", g)
	}
	return h
}
