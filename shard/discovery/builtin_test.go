package discovery

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// fakeDocument serves one document like the generic server's handlers: with
// an ETag, answering a matching If-None-Match with 304.
type fakeDocument struct {
	lock   sync.Mutex
	body   string
	etag   string
	status int
	// conditional records the If-None-Match of every request.
	conditional []string
}

func (f *fakeDocument) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.conditional = append(f.conditional, req.Header.Get("If-None-Match"))
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	if f.etag != "" {
		w.Header().Set("ETag", f.etag)
		if req.Header.Get("If-None-Match") == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	_, _ = w.Write([]byte(f.body))
}

func (f *fakeDocument) set(body, etag string, status int) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.body, f.etag, f.status = body, etag, status
}

func (f *fakeDocument) requests() []string {
	f.lock.Lock()
	defer f.lock.Unlock()
	return append([]string(nil), f.conditional...)
}

func parseString(b []byte) (string, error) { return string(b), nil }

func TestBuiltinDocRevalidation(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	next := &fakeDocument{body: "one", etag: `"1"`}
	d := newBuiltinDoc(next, clk, 10*time.Second, "/doc", acceptJSON, parseString)

	first, err := d.get(t.Context())
	if err != nil || first.value != "one" {
		t.Fatalf("get = %v, %v", first, err)
	}
	if s, _ := d.get(t.Context()); s != first || len(next.requests()) != 1 {
		t.Errorf("a fresh snapshot was fetched again: %q", next.requests())
	}

	clk.SetTime(clk.Now().Add(11 * time.Second))
	if s, _ := d.get(t.Context()); s != first {
		t.Errorf("an unchanged document made a new snapshot")
	}
	if got := next.requests(); len(got) != 2 || got[1] != `"1"` {
		t.Errorf("revalidation requests = %q, want a conditional second one", got)
	}

	clk.SetTime(clk.Now().Add(11 * time.Second))
	next.set("two", `"2"`, 0)
	second, err := d.get(t.Context())
	if err != nil || second == first || second.value != "two" {
		t.Errorf("after a change: %v, %v", second, err)
	}

	clk.SetTime(clk.Now().Add(11 * time.Second))
	next.set("", "", http.StatusInternalServerError)
	if s, err := d.get(t.Context()); err != nil || s != second {
		t.Errorf("a failed revalidation: %v, %v; want the last snapshot", s, err)
	}
	if s, _ := d.get(t.Context()); s != second || len(next.requests()) != 4 {
		t.Errorf("a failed revalidation is retried before the interval: %q", next.requests())
	}
}

func TestBuiltinDocWithoutETag(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	next := &fakeDocument{body: "one"}
	d := newBuiltinDoc(next, clk, time.Second, "/doc", acceptJSON, parseString)
	first, _ := d.get(t.Context())
	clk.SetTime(clk.Now().Add(2 * time.Second))
	if s, _ := d.get(t.Context()); s != first {
		t.Errorf("the same content made a new snapshot")
	}
	clk.SetTime(clk.Now().Add(2 * time.Second))
	next.set("two", "", 0)
	if s, _ := d.get(t.Context()); s == first || s.value != "two" {
		t.Errorf("changed content kept the snapshot")
	}
}

func TestBuiltinDocFailures(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	next := &fakeDocument{status: http.StatusNotFound}
	d := newBuiltinDoc(next, clk, -1, "/doc", acceptJSON, parseString)
	if _, err := d.get(t.Context()); err == nil || !strings.Contains(err.Error(), "/doc") {
		t.Errorf("err = %v, want one naming the path", err)
	}
	next.set("one", "", 0)
	first, err := d.get(t.Context())
	if err != nil || first.value != "one" {
		t.Fatalf("a failure was cached: %v, %v", first, err)
	}
	clk.SetTime(clk.Now().Add(time.Hour))
	next.set("two", "", 0)
	if s, _ := d.get(t.Context()); s != first {
		t.Errorf("a negative interval revalidated")
	}
}

func TestBuiltinDocsAreCapturedOnce(t *testing.T) {
	var lock sync.Mutex
	seen := map[string]int{}
	s := startTestServer(t, nil)
	next := s.Handler.next
	s.Handler.builtins = newBuiltins(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		lock.Lock()
		seen[req.URL.Path]++
		lock.Unlock()
		next.ServeHTTP(w, req)
	}), clocktesting.NewFakePassiveClock(time.Now()), time.Hour)
	s.CRDs.set("a", newCRD("example.com", "Widget"))
	s.CRDs.set("b", newCRD("other.io", "Gizmo"))
	for _, c := range []string{"a", "b", "a"} {
		for _, p := range []string{"/apis", "/openapi/v3", "/openapi/v2"} {
			get(t, s.URL+"/clusters/"+c+p, acceptJSON)
		}
	}
	lock.Lock()
	defer lock.Unlock()
	for _, p := range []string{"/apis", "/openapi/v3", "/openapi/v2"} {
		if seen[p] != 1 {
			t.Errorf("%s captured %d times, want once", p, seen[p])
		}
	}
}
