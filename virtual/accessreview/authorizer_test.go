package accessreview

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// fakeShard answers SubjectAccessReviews: allowed in the logical clusters
// of allow, denied elsewhere, and counts them by path.
type fakeShard struct {
	mu    sync.Mutex
	allow map[string]bool
	calls map[string]int
	last  authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cluster, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/clusters/"), "/")
	if r.Method != http.MethodPost || !ok || rest != "apis/authorization.k8s.io/v1/subjectaccessreviews" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	var review authorizationv1.SubjectAccessReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.calls[r.URL.Path]++
	f.last = review.Spec
	allowed := f.allow[cluster]
	f.mu.Unlock()
	review.APIVersion, review.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
	review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Denied: !allowed, Reason: "decided in " + cluster}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

func (f *fakeShard) count(cluster string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls["/clusters/"+cluster+"/apis/authorization.k8s.io/v1/subjectaccessreviews"]
}

func newAuthorizer(t *testing.T, f *fakeShard, ttl time.Duration) *Authorizer {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Client: cs.AuthorizationV1().RESTClient(), AllowTTL: ttl, DenyTTL: ttl, CacheSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func attrs(name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User:     &user.DefaultInfo{Name: name, Groups: []string{"g"}, Extra: map[string][]string{"scopes": {"cluster:a"}}},
		Verb:     "list",
		APIGroup: "apis.kcp.io", APIVersion: "v1alpha1", Resource: "apiexports", Subresource: "content", Name: "e",
		ResourceRequest: true,
	}
}

func in(cluster logicalcluster.Name) context.Context {
	return logicalcluster.WithCluster(context.Background(), logicalcluster.Cluster{Name: cluster})
}

func TestAuthorizeAsksTheShardInTheLogicalCluster(t *testing.T) {
	f := &fakeShard{allow: map[string]bool{"a": true}, calls: map[string]int{}}
	a := newAuthorizer(t, f, time.Minute)

	d, reason, err := a.Authorize(in("a"), attrs("alice"))
	if err != nil || d != authorizer.DecisionAllow || reason != "decided in a" {
		t.Fatalf("in a: got %v %q %v, want allow", d, reason, err)
	}
	if f.last.User != "alice" || f.last.ResourceAttributes == nil || f.last.ResourceAttributes.Subresource != "content" || f.last.Extra["scopes"][0] != "cluster:a" {
		t.Errorf("review spec: %+v", f.last)
	}
	// The same question in another logical cluster is not answered from
	// the cache.
	if d, _, _ := a.Authorize(in("b"), attrs("alice")); d != authorizer.DecisionDeny {
		t.Errorf("in b: got %v, want deny", d)
	}
	if f.count("b") != 1 {
		t.Errorf("reviews in b: %d, want 1", f.count("b"))
	}
	// Asked again, both answers come from the cache.
	for _, c := range []logicalcluster.Name{"a", "b"} {
		if _, _, err := a.Authorize(in(c), attrs("alice")); err != nil {
			t.Fatal(err)
		}
		if f.count(string(c)) != 1 {
			t.Errorf("reviews in %s after a repeated question: %d, want 1", c, f.count(string(c)))
		}
	}
	// Another user is another question.
	if _, _, err := a.Authorize(in("a"), attrs("bob")); err != nil {
		t.Fatal(err)
	}
	if f.count("a") != 2 {
		t.Errorf("reviews in a after another user: %d, want 2", f.count("a"))
	}
}

func TestAuthorizeWithoutCacheAsksEveryTime(t *testing.T) {
	f := &fakeShard{allow: map[string]bool{"a": true}, calls: map[string]int{}}
	a := newAuthorizer(t, f, 0)
	for range 3 {
		if d, _, _ := a.Authorize(in("a"), attrs("alice")); d != authorizer.DecisionAllow {
			t.Fatalf("got %v, want allow", d)
		}
	}
	if f.count("a") != 3 {
		t.Errorf("reviews: %d, want 3", f.count("a"))
	}
}

func TestAuthorizeNeedsALogicalCluster(t *testing.T) {
	f := &fakeShard{allow: map[string]bool{"a": true}, calls: map[string]int{}}
	a := newAuthorizer(t, f, time.Minute)
	for name, ctx := range map[string]context.Context{
		"none":     context.Background(),
		"wildcard": logicalcluster.WithCluster(context.Background(), logicalcluster.Cluster{Wildcard: true}),
	} {
		if d, _, _ := a.Authorize(ctx, attrs("alice")); d != authorizer.DecisionDeny {
			t.Errorf("%s: got %v, want deny", name, d)
		}
	}
}

func TestAuthorizeShardErrorIsNoOpinion(t *testing.T) {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Client: cs.AuthorizationV1().RESTClient(), AllowTTL: time.Minute, DenyTTL: time.Minute, CacheSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := a.Authorize(in("a"), attrs("alice"))
	if d != authorizer.DecisionNoOpinion || err == nil {
		t.Errorf("got %v %v, want no opinion with an error", d, err)
	}
}
