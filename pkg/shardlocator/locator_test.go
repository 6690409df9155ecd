package shardlocator

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// TestFind: the shard that serves a cluster's LogicalCluster is found
// among several and kept; a cluster none serves is not found, and asked
// about again only after a while.
func TestFind(t *testing.T) {
	var asked atomic.Int32
	shard := func(cluster string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			asked.Add(1)
			if req.URL.Path == "/clusters/"+cluster+"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" {
				_, _ = w.Write([]byte(`{"kind":"LogicalCluster"}`))
				return
			}
			http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
		}))
	}
	a, b := shard("in-a"), shard("in-b")
	defer a.Close()
	defer b.Close()
	l := New(Config{
		Shards: func() []Shard { return []Shard{{Name: "a", BaseURL: a.URL}, {Name: "b", BaseURL: b.URL}} },
		Admin:  &rest.Config{},
	})
	for _, want := range []struct{ cluster, shard, url string }{{"in-a", "a", a.URL}, {"in-b", "b", b.URL}} {
		cfg, name, ok := l.Find(t.Context(), logicalcluster.Name(want.cluster))
		if !ok || name != want.shard || cfg.Host != want.url {
			t.Errorf("Find(%s) = %v %q %v, want shard %s", want.cluster, cfg, name, ok, want.shard)
		}
	}
	before := asked.Load()
	if _, name, ok := l.Find(t.Context(), "in-a"); !ok || name != "a" || asked.Load() != before {
		t.Errorf("Find(in-a) again: %q %v, %d more questions, want a from what was kept", name, ok, asked.Load()-before)
	}
	if _, _, ok := l.Find(t.Context(), "nowhere"); ok {
		t.Error("Find(nowhere) found a shard")
	}
	before = asked.Load()
	if _, _, ok := l.Find(t.Context(), "nowhere"); ok || asked.Load() != before {
		t.Errorf("Find(nowhere) again asked %d more questions, want none for a while", asked.Load()-before)
	}
	l.Forget("in-a")
	if _, name, ok := l.Find(t.Context(), "in-a"); !ok || name != "a" || asked.Load() == before {
		t.Error("Find(in-a) after Forget did not ask again")
	}
}

// TestFindLimitsLookups: made-up cluster names beyond the lookup limit are
// not looked for (no question to any shard) and not kept as missing,
// while a cluster already found is still answered.
func TestFindLimitsLookups(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		asked.Add(1)
		if req.URL.Path == "/clusters/known/apis/core.kcp.io/v1alpha1/logicalclusters/cluster" {
			_, _ = w.Write([]byte(`{"kind":"LogicalCluster"}`))
			return
		}
		http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
	}))
	defer srv.Close()
	l := New(Config{
		Shards:           func() []Shard { return []Shard{{Name: "a", BaseURL: srv.URL}} },
		Admin:            &rest.Config{},
		LookupsPerSecond: 0.001, LookupBurst: 3,
	})
	if _, _, ok := l.Find(t.Context(), "known"); !ok {
		t.Fatal("Find(known) did not find the shard")
	}
	for i := range 20 {
		l.Find(t.Context(), logicalcluster.Name(fmt.Sprintf("made-up-%d", i)))
	}
	if got := asked.Load(); got != 3 {
		t.Errorf("%d questions to the shard for 1 known and 20 made-up clusters with a burst of 3, want 3", got)
	}
	if _, name, ok := l.Find(t.Context(), "known"); !ok || name != "a" {
		t.Errorf("Find(known) beyond the limit = %q %v, want the kept answer", name, ok)
	}
}
