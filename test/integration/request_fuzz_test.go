package integration

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestRequestFuzzer sends a few thousand random requests as a tenant (the
// attacker of startTenants) to a running shard: random clusters (its own,
// the victim's, all, made up), paths, verbs, bodies, content types,
// resourceVersions and selectors. No answer may be a 5xx, and none may
// contain the victim's secret. The seed is printed; TESSERA_FUZZ_SEED
// replays a run, TESSERA_FUZZ_REQUESTS sets its length.
func TestRequestFuzzer(t *testing.T) {
	tn := startTenants(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TESSERA_FUZZ_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	n := 2000
	if s := os.Getenv("TESSERA_FUZZ_REQUESTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		n = v
	}
	t.Logf("request fuzzer: seed %d (TESSERA_FUZZ_SEED=%d replays it), %d requests", seed, seed, n)
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &requestGen{rnd: rnd, own: string(tn.a), victim: string(tn.b)}

	cfg := rest.AnonymousClientConfig(tn.s.Config(""))
	cfg.BearerToken = attackerToken
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int]int{}
	for i := range n {
		req := g.next()
		code, body, err := sendFuzzed(t.Context(), client, tn.s.URL, req)
		if err != nil {
			t.Fatalf("request %d %s %s: %v", i, req.method, req.url, err)
		}
		codes[code]++
		// kube-apiserver answers a resourceVersion the watch cache has
		// not reached after 3s with 504 ResourceVersionTooLarge.
		if code >= 500 && !(code == http.StatusGatewayTimeout && strings.Contains(body, "ResourceVersionTooLarge")) {
			t.Errorf("request %d: %s %s (%s, %d bytes) got %d: %.300s", i, req.method, req.url, req.contentType, len(req.body), code, body)
		}
		if strings.Contains(body, victimSecretValue) {
			t.Fatalf("request %d: %s %s got the victim's secret (%d): %.300s", i, req.method, req.url, code, body)
		}
	}
	t.Logf("status codes: %v", codes)
	// The shard still answers.
	if code, _, err := sendFuzzed(t.Context(), client, tn.s.URL, fuzzedRequest{method: "GET", url: "/readyz"}); err != nil || code != 200 {
		t.Errorf("/readyz after fuzzing: %d, %v", code, err)
	}
}

type fuzzedRequest struct {
	method, url, contentType string
	body                     []byte
	watch                    bool
	header                   http.Header
}

// sendFuzzed sends r and reads its answer; a watch is read for 300ms.
func sendFuzzed(ctx context.Context, client *http.Client, base string, r fuzzedRequest) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, base+r.url, bytes.NewReader(r.body))
	if err != nil {
		// Not even a request Go can send: nothing to test.
		return 0, "", nil
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	readCtx, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if !r.watch {
		readCtx = ctx
	}
	return resp.StatusCode, string(readSome(readCtx, io.NopCloser(resp.Body))), nil
}

// requestGen makes random requests.
type requestGen struct {
	rnd         *rand.Rand
	own, victim string
}

func (g *requestGen) pick(options ...string) string { return options[g.rnd.IntN(len(options))] }

func (g *requestGen) cluster() string {
	return g.pick(g.own, g.own, g.own, g.victim, g.victim, "*", "root", "system:admin", g.own+":x", "x", "", "..", "%2A", g.victim+"%2F..", "ROOT", strings.Repeat("a", 300))
}

var fuzzPaths = []string{
	"/api/v1/namespaces/default/secrets", "/api/v1/namespaces/default/secrets/victim", "/api/v1/secrets", "/api/v1/namespaces/default/configmaps",
	"/api/v1/namespaces/default/configmaps/cm", "/api/v1/namespaces", "/api/v1/namespaces/default", "/api/v1/namespaces/default/status",
	"/api/v1/namespaces/default/serviceaccounts/default/token", "/api/v1/namespaces/default/serviceaccounts",
	"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
	"/apis/tenancy.kcp.io/v1alpha1/workspaces", "/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
	"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
	"/apis/authentication.k8s.io/v1/tokenreviews", "/apis/example.com/v1/widgets", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
	"/api", "/apis", "/version", "/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1", "/healthz", "/metrics", "/", "/api/v1", "/apis/apps/v1",
}

func (g *requestGen) path() string {
	p := g.pick(fuzzPaths...)
	switch g.rnd.IntN(8) {
	case 0:
		p += "/" + g.pick("..", ".", "%2F", "%00", "x", "", "victim", "%2e%2e", strings.Repeat("z", 500))
	case 1:
		segs := strings.Split(p, "/")
		segs[g.rnd.IntN(len(segs))] = g.pick("..", "*", "%2F", "", "a:b", "UPPER", "ns/../x")
		p = strings.Join(segs, "/")
	}
	return p
}

func (g *requestGen) query(watch bool) string {
	var q []string
	if watch {
		q = append(q, "watch="+g.pick("1", "true", "yes"), "timeoutSeconds=1")
	}
	if g.rnd.IntN(2) == 0 {
		q = append(q, "resourceVersion="+g.pick("", "0", "1", "abc", "-1", "99999999999999", "18446744073709551616"))
	}
	if g.rnd.IntN(3) == 0 {
		q = append(q, "labelSelector="+g.pick("a=b", "a%20in%20(b,c)", "!!", "a=", "%3D%3D", "x!=y,z"))
	}
	if g.rnd.IntN(3) == 0 {
		q = append(q, "fieldSelector="+g.pick("metadata.name=victim", "metadata.namespace=default", "spec.x=y", "==", "metadata.name%3Dvictim"))
	}
	if g.rnd.IntN(4) == 0 {
		q = append(q, "limit="+g.pick("1", "0", "-5", "x"), "continue="+g.pick("", "abc", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ2aWN0aW0ifQ"))
	}
	if g.rnd.IntN(6) == 0 {
		q = append(q, "dryRun="+g.pick("All", "x"), "fieldManager="+g.pick("m", strings.Repeat("m", 200)))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + strings.Join(q, "&")
}

func (g *requestGen) body() (string, []byte) {
	ct := g.pick("application/json", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/merge-patch+json",
		"application/json-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml", "text/plain", "garbage/x", "")
	var b string
	switch g.rnd.IntN(9) {
	case 0:
		b = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"victim","namespace":"default"},"stringData":{"a":"b"}}`
	case 1:
		b = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","annotations":{"kcp.io/cluster":"` + g.victim + `"}}}`
	case 2:
		b = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"x"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"User","name":"user-a","apiGroup":"rbac.authorization.k8s.io"}]}`
	case 3:
		b = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":`
	case 4:
		b = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\ndata:\n  a: b\n"
	case 5:
		raw := make([]byte, g.rnd.IntN(256))
		for i := range raw {
			raw[i] = byte(g.rnd.IntN(256))
		}
		b = "k8s\x00" + string(raw)
	case 6:
		b = `[{"op":"add","path":"/metadata/annotations","value":{"kcp.io/cluster":"` + g.victim + `"}}]`
	case 7:
		b = `{"metadata":{"finalizers":["x"],"ownerReferences":[{"apiVersion":"v1","kind":"Secret","name":"victim","uid":"u"}]}}`
	default:
		b = strings.Repeat(`{"a":`, g.rnd.IntN(2000)) + "1"
	}
	return ct, []byte(b)
}

func (g *requestGen) next() fuzzedRequest {
	r := fuzzedRequest{method: g.pick("GET", "GET", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")}
	r.watch = r.method == "GET" && g.rnd.IntN(15) == 0
	c := g.cluster()
	r.url = "/clusters/" + c + g.path() + g.query(r.watch)
	if g.rnd.IntN(12) == 0 {
		r.url = g.path() + g.query(r.watch) // no cluster: system:admin
	}
	if r.method == "POST" || r.method == "PUT" || r.method == "PATCH" || g.rnd.IntN(10) == 0 {
		r.contentType, r.body = g.body()
	}
	if g.rnd.IntN(10) == 0 {
		r.header = http.Header{"Impersonate-User": {g.pick("user-b", "system:admin", "system:apiserver", "user-a")}}
		if g.rnd.IntN(2) == 0 {
			r.header["Impersonate-Group"] = []string{g.pick("system:masters", "team-b", "system:authenticated")}
		}
	}
	if g.rnd.IntN(20) == 0 {
		r.header = http.Header{"Accept": {g.pick("application/vnd.kubernetes.protobuf", "application/json;as=Table;v=v1;g=meta.k8s.io", "application/yaml", "x/y")}}
	}
	return r
}
