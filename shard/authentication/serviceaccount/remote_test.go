package serviceaccount

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestTokenCluster(t *testing.T) {
	e := newEnv(t)
	sa := e.addServiceAccount("remote", "default", "syncer", "sa-uid")
	for name, tc := range map[string]struct {
		token string
		want  logicalcluster.Name
		ok    bool
	}{
		"bound":      {e.bound(t, "remote", sa), "remote", true},
		"legacy":     {e.legacy(t, "remote", sa, "syncer-token"), "remote", true},
		"not a JWT":  {"static-token", "", false},
		"three dots": {"a.b.c", "", false},
	} {
		got, ok := tokenCluster(tc.token)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: tokenCluster = %q, %v; want %q, %v", name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRemote: a token of another shard's logical cluster is reviewed by
// that shard, in that cluster, and the answer kept; tokens of this shard's
// clusters and of clusters no shard holds are not asked about.
func TestRemote(t *testing.T) {
	e := newEnv(t)
	sa := e.addServiceAccount("remote", "default", "syncer", "sa-uid")
	good, bad := e.bound(t, "remote", sa), e.legacy(t, "remote", sa, "revoked")
	local := e.bound(t, "here", sa)
	unknown := e.bound(t, "nowhere", sa)

	var reviews atomic.Int32
	// The other shard's TokenReview endpoint.
	shard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/clusters/remote/apis/authentication.k8s.io/v1/tokenreviews" {
			t.Logf("unexpected %s %s", req.Method, req.URL.Path)
			http.Error(w, "unexpected "+req.Method+" "+req.URL.Path, http.StatusNotFound)
			return
		}
		reviews.Add(1)
		var review authenticationv1.TokenReview
		body, err := io.ReadAll(req.Body)
		if err == nil {
			_, _, err = scheme.Codecs.UniversalDeserializer().Decode(body, nil, &review)
		}
		if err != nil {
			t.Logf("decoding %s: %v", req.Header.Get("Content-Type"), err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if review.Spec.Token == good {
			review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
				Username: "system:serviceaccount:default:syncer", UID: "sa-uid", Groups: []string{"system:serviceaccounts"},
				Extra: map[string]authenticationv1.ExtraValue{ClusterNameExtraKey: {"remote"}},
			}}
		}
		review.APIVersion, review.Kind = "authentication.k8s.io/v1", "TokenReview"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	defer shard.Close()

	r := NewRemote(RemoteConfig{
		Local: func(c logicalcluster.Name) bool { return c == "here" },
		ShardOf: func(_ context.Context, c logicalcluster.Name) (*rest.Config, bool) {
			if c != "remote" {
				return nil, false
			}
			return &rest.Config{Host: shard.URL}, true
		},
	})
	for i := range 2 {
		resp, ok, err := r.AuthenticateToken(t.Context(), good)
		if err != nil || !ok || resp.User.GetName() != "system:serviceaccount:default:syncer" ||
			strings.Join(resp.User.GetExtra()[ClusterNameExtraKey], ",") != "remote" {
			t.Fatalf("attempt %d: the other shard's token: %v %v %+v", i, ok, err, resp)
		}
	}
	if n := reviews.Load(); n != 1 {
		t.Errorf("%d reviews for one token asked twice, want 1 (the answer is kept)", n)
	}
	for i := range 2 {
		if _, ok, err := r.AuthenticateToken(t.Context(), bad); ok || err != nil {
			t.Errorf("attempt %d: a token the other shard refuses: %v %v", i, ok, err)
		}
	}
	if n := reviews.Load(); n != 2 {
		t.Errorf("%d reviews after a refused token asked twice, want 2", n)
	}
	for name, token := range map[string]string{"this shard's": local, "nobody's": unknown, "a static": "static-token"} {
		if _, ok, err := r.AuthenticateToken(t.Context(), token); ok || err != nil {
			t.Errorf("%s token: %v %v", name, ok, err)
		}
	}
	if n := reviews.Load(); n != 2 {
		t.Errorf("%d reviews after tokens that are not the other shard's, want 2", n)
	}
}
