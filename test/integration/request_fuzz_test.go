package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// Environment of TestRequestFuzzer: the seed (random when unset, printed
// either way), how many requests (5000), and how long at most (20s).
const (
	fuzzSeedEnv     = "TESSERA_FUZZ_SEED"
	fuzzRequestsEnv = "TESSERA_FUZZ_REQUESTS"
	fuzzTimeEnv     = "TESSERA_FUZZ_TIME"
)

const (
	fuzzVictim   logicalcluster.Name = "fz-a"
	fuzzAttacker logicalcluster.Name = "fz-b"
	fuzzToken                        = "fuzz-b-token"
	// fuzzMarker is in the victim's Secrets, ConfigMaps and Widget; no
	// answer to the attacker may contain it, as it is or base64-encoded.
	fuzzMarker = "fz-marker-7c1e0b9d4a"
)

// fuzzWidgetsCRD is served in both clusters of TestRequestFuzzer.
const fuzzWidgetsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.fuzz.example.com"},
"spec":{"group":"fuzz.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

var (
	crdGVR         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	fuzzWidgetsGVR = schema.GroupVersionResource{Group: "fuzz.example.com", Version: "v1", Resource: "widgets"}
)

// fuzzRequest is one generated request; String reproduces it.
type fuzzRequest struct {
	method      string
	path        string // raw, may hold escapes
	query       string // raw
	contentType string
	accept      string
	header      http.Header
	body        []byte
	watch       bool
}

func (r fuzzRequest) String() string {
	body := string(r.body)
	if len(body) > 200 {
		body = body[:200] + fmt.Sprintf("...(%d bytes)", len(r.body))
	}
	return fmt.Sprintf("%s %s?%s content-type=%q accept=%q header=%v body=%q", r.method, r.path, r.query, r.contentType, r.accept, r.header, body)
}

// fuzzer generates requests from one seeded source.
type fuzzer struct {
	rnd *rand.Rand
	// rv is a resourceVersion the shard had reached when the victim's data
	// was written, so that forged continue tokens and watches read it.
	rv int64
}

func (f *fuzzer) pick(xs ...string) string { return xs[f.rnd.Intn(len(xs))] }

func (f *fuzzer) chance(p float64) bool { return f.rnd.Float64() < p }

func (f *fuzzer) randomString(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789-.:_%/?#&=+ ~!*'()[]{}\"\\\x00\xff\u00e9\u4e16"
	var b strings.Builder
	for range n {
		b.WriteString(string([]rune(chars)[f.rnd.Intn(len([]rune(chars)))]))
	}
	return b.String()
}

func (f *fuzzer) cluster() string {
	switch f.rnd.Intn(12) {
	case 0, 1, 2, 3, 4, 5:
		return string(fuzzAttacker)
	case 6:
		return string(fuzzVictim)
	case 7:
		return "*"
	case 8:
		return f.pick("root", "system:admin", "system:shard", "fz", "fz-a-", "fz-ab", "fz-a:b", "root:fz-a", "FZ-A", "fz%2Da", "fz-a%2F", "%2A", "fz-b%00", "")
	case 9:
		return url.PathEscape(f.randomString(1 + f.rnd.Intn(12)))
	default:
		return string(fuzzAttacker) + f.pick("/clusters/"+string(fuzzVictim), "/../"+string(fuzzVictim), "%2F..%2F"+string(fuzzVictim), "//", "/.", ":"+string(fuzzVictim))
	}
}

func (f *fuzzer) name() string {
	switch f.rnd.Intn(8) {
	case 0, 1, 2:
		return f.pick("victim", "marked", "default", "cluster", "kube-root-ca.crt", "x")
	case 3:
		return f.pick("..", ".", "%2e%2e", "%2F", "a%2Fb", "%00", "fz-a", "victim%2F..%2F..%2Ffz-a%2Fdefault%2Fvictim", strings.Repeat("n", 300))
	case 4:
		return url.PathEscape(f.randomString(1 + f.rnd.Intn(20)))
	default:
		return "n" + strconv.Itoa(f.rnd.Intn(20))
	}
}

func (f *fuzzer) namespace() string {
	if f.chance(0.7) {
		return f.pick("default", "default", "kube-system", "fz", "other")
	}
	return f.name()
}

type apiResource struct {
	prefix     string // /api/v1 or /apis/<group>/<version>
	resource   string
	namespaced bool
}

var fuzzResources = []apiResource{
	{"/api/v1", "configmaps", true}, {"/api/v1", "secrets", true}, {"/api/v1", "serviceaccounts", true},
	{"/api/v1", "namespaces", false}, {"/api/v1", "events", true}, {"/api/v1", "resourcequotas", true},
	{"/api/v1", "limitranges", true}, {"/api/v1", "pods", true}, {"/api/v1", "nodes", false},
	{"/apis/events.k8s.io/v1", "events", true}, {"/apis/coordination.k8s.io/v1", "leases", true},
	{"/apis/rbac.authorization.k8s.io/v1", "roles", true}, {"/apis/rbac.authorization.k8s.io/v1", "rolebindings", true},
	{"/apis/rbac.authorization.k8s.io/v1", "clusterroles", false}, {"/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", false},
	{"/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", false},
	{"/apis/admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", false},
	{"/apis/certificates.k8s.io/v1", "certificatesigningrequests", false},
	{"/apis/authorization.k8s.io/v1", "selfsubjectaccessreviews", false}, {"/apis/authorization.k8s.io/v1", "subjectaccessreviews", false},
	{"/apis/authorization.k8s.io/v1", "localsubjectaccessreviews", true},
	{"/apis/authentication.k8s.io/v1", "tokenreviews", false}, {"/apis/authentication.k8s.io/v1", "selfsubjectreviews", false},
	{"/apis/core.kcp.io/v1alpha1", "logicalclusters", false}, {"/apis/tenancy.kcp.io/v1alpha1", "workspaces", false},
	{"/apis/tenancy.kcp.io/v1alpha1", "workspacetypes", false}, {"/apis/apis.kcp.io/v1alpha1", "apibindings", false},
	{"/apis/apis.kcp.io/v1alpha1", "apiexports", false}, {"/apis/flowcontrol.apiserver.k8s.io/v1", "flowschemas", false},
	{"/apis/fuzz.example.com/v1", "widgets", true}, {"/apis/nothere/v9", "things", false},
}

func (f *fuzzer) path() string {
	switch f.rnd.Intn(12) {
	case 0:
		return f.pick("/api", "/apis", "/api/v1", "/apis/rbac.authorization.k8s.io", "/apis/core.kcp.io/v1alpha1", "/version",
			"/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1", "/healthz", "/readyz?verbose", "/metrics", "/debug/pprof/", "/livez/etcd", "/", "")
	case 1:
		// Odd segments.
		return f.pick("/api/v1/namespaces/default/secrets/../../../../clusters/fz-a/api/v1/namespaces/default/secrets",
			"//api/v1//namespaces//default//secrets", "/api/v1/namespaces/default/secrets/", "/api/v1/namespaces/%64efault/secrets",
			"/api/v1/namespaces/default/secrets/victim/", "/apis/%2E%2E/v1", "/api/v1/namespaces/default/configmaps/victim/status/x/y",
			"/clusters/fz-a/api/v1/secrets", "/api/v1/secrets;fz-a", "/api/v1/namespaces/default/secrets%3Fwatch=1",
			"/api/v1/namespaces/default/pods/x/exec", "/api/v1/namespaces/default/pods/x/proxy/foo", "/api/v1/proxy/namespaces/default/services/x",
			"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.fuzz.example.com/status",
			"/api/v1/namespaces/default/serviceaccounts/default/token", "/api/v1/namespaces/default/finalize",
			"/api/v1/watch/namespaces/default/secrets", "/api/v1/watch/secrets")
	}
	// Most requests go where the victim's data is.
	r := fuzzResources[f.rnd.Intn(2)]
	if f.chance(0.5) {
		r = fuzzResources[f.rnd.Intn(len(fuzzResources))]
	}
	p := r.prefix
	if r.namespaced && f.chance(0.8) || !r.namespaced && f.chance(0.05) {
		p += "/namespaces/" + f.namespace()
	}
	p += "/" + r.resource
	if f.chance(0.5) {
		p += "/" + f.name()
		if f.chance(0.15) {
			p += "/" + f.pick("status", "finalize", "token", "scale", "approval", "proxy", "log", f.name())
		}
	}
	return p
}

func (f *fuzzer) query(watch bool) string {
	q := url.Values{}
	if watch {
		q.Set("watch", f.pick("1", "true", "1", "0"))
		q.Set("timeoutSeconds", "1")
	}
	if f.chance(0.4) {
		q.Set("resourceVersion", f.pick("", "0", "1", "2", "garbage", "-1", "99999999999999999999", "9223372036854775807", "18446744073709551615", "1.5", "0x10",
			strconv.FormatInt(f.rv, 10), strconv.FormatInt(f.rv-10, 10), strconv.FormatInt(f.rv-20, 10)))
	}
	if f.chance(0.15) {
		q.Set("resourceVersionMatch", f.pick("NotOlderThan", "Exact", "garbage", ""))
	}
	if f.chance(0.25) {
		q.Set("limit", f.pick("1", "0", "-1", "2", "garbage", "9223372036854775807"))
	}
	if f.chance(0.25) {
		q.Set("continue", f.continueToken())
	}
	if f.chance(0.3) {
		q.Set("labelSelector", f.pick("a=b", "fz=1", "!fz", "fz in (a,b)", "=", "a==b==c", "a in (", "fz notin ()", "!", f.randomString(8), strings.Repeat("a=b,", 200)))
	}
	if f.chance(0.3) {
		q.Set("fieldSelector", f.pick("metadata.name=victim", "metadata.namespace=default", "metadata.name!=x", "kcp.io/cluster=fz-a",
			"kcp.io/cluster!=fz-b", "metadata.annotations.kcp.io/cluster=fz-a", "spec.x=1", "type=Opaque", "status.phase=Active", "=", "metadata.name",
			"metadata.name==x==y", f.randomString(8)))
	}
	if f.chance(0.1) {
		q.Set("sendInitialEvents", f.pick("true", "false", "garbage"))
		q.Set("allowWatchBookmarks", f.pick("true", "false"))
	}
	if f.chance(0.1) {
		q.Set("dryRun", f.pick("All", "garbage"))
	}
	if f.chance(0.1) {
		q.Set("fieldManager", f.pick("fz", "", strings.Repeat("m", 200), f.randomString(5)))
	}
	if f.chance(0.05) {
		q.Set("force", f.pick("true", "false", "x"))
	}
	if f.chance(0.05) {
		q.Set("propagationPolicy", f.pick("Foreground", "Orphan", "Background", "x"))
	}
	if f.chance(0.05) {
		q.Set("gracePeriodSeconds", f.pick("0", "-1", "x", "99999999999"))
	}
	if f.chance(0.05) {
		q.Set("fieldValidation", f.pick("Strict", "Warn", "Ignore", "x"))
	}
	if f.chance(0.05) {
		q.Set("pretty", "true")
	}
	s := q.Encode()
	if f.chance(0.05) {
		s += "&" + f.pick("%zz", "a=%", "=&&=", "watch=1&watch=0", "resourceVersion=0&resourceVersion=1", ";x=1")
	}
	return s
}

// continueToken returns a forged or garbage continue token; some name
// start keys in the victim's cluster.
func (f *fuzzer) continueToken() string {
	switch f.rnd.Intn(4) {
	case 0:
		return f.randomString(12)
	case 1:
		key := f.pick("fz-a/default/victim", "fz-a/default/", "fz-a/", "../fz-a/default/", "/../../fz-a/", "default/victim", "\x00", "fz-a",
			"../../secrets/fz-a/default/victim", "/fz-a/default/marked")
		rv := f.rv
		if f.chance(0.3) {
			rv = f.rnd.Int63n(f.rv + 100)
		}
		return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"v":"meta.k8s.io/v1","rv":%d,"start":%q}`, rv, key))
	case 2:
		return base64.RawURLEncoding.EncodeToString([]byte(f.pick(`{"v":"meta.k8s.io/v1"}`, `{"v":"x","rv":1,"start":"a"}`, `[]`, `null`)))
	default:
		return "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJmei1hLyJ9"
	}
}

func (f *fuzzer) body() (contentType string, body []byte) {
	name := f.name()
	ns := f.namespace()
	objects := []string{
		fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"k":"v"}}`, name, ns),
		fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":%q,"annotations":{"kcp.io/cluster":"fz-a"}},"stringData":{"k":"v"}}`, name),
		fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"ownerReferences":[{"apiVersion":"v1","kind":"Secret","name":"victim","uid":"x"}]}}`, name),
		fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"finalizers":["x/y"]},"spec":{"finalizers":["z"]}}`, name),
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"fz"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"User","name":"user-fz"}]}`,
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"x","resourceAttributes":{"verb":"get","resource":"secrets"}}}`,
		`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"fuzz-b-token"}}`,
		`{"apiVersion":"core.kcp.io/v1alpha1","kind":"LogicalCluster","metadata":{"name":"cluster"}}`,
		`{"apiVersion":"tenancy.kcp.io/v1alpha1","kind":"Workspace","metadata":{"name":"fz"},"spec":{"cluster":"fz-a"}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.fuzz.example.com"},"spec":{"group":"fuzz.example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`,
		`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"x"}}`,
		`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground","preconditions":{"uid":"x"}}`,
		`{"metadata":{"annotations":{"kcp.io/cluster":"fz-a"},"labels":{"fz":"1"}},"data":{"k":null}}`,
		`[{"op":"replace","path":"/metadata/annotations/kcp.io~1cluster","value":"fz-a"},{"op":"add","path":"/data/x","value":"y"}]`,
		`[{"op":"move","from":"/a","path":"/a/b"},{"op":"test","path":"/","value":null}]`,
		`{"$patch":"replace","metadata":{"$retainKeys":["x"]}}`,
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}]}`,
		`null`, `[]`, `{}`, `""`, `1e999`, `{"apiVersion":1,"kind":{}}`,
		strings.Repeat(`{"a":`, 10000) + strings.Repeat(`}`, 10000),
	}
	obj := objects[f.rnd.Intn(len(objects))]
	ct := f.pick("application/json", "application/json", "application/merge-patch+json", "application/strategic-merge-patch+json",
		"application/json-patch+json", "application/apply-patch+yaml", "application/yaml", "application/vnd.kubernetes.protobuf",
		"text/plain", "application/json; charset=utf-16", "multipart/form-data; boundary=x", "", "application/apply-patch+cbor", "application/cbor", "*/*", ";;")
	switch f.rnd.Intn(8) {
	case 0:
		return ct, []byte(obj[:f.rnd.Intn(len(obj)+1)]) // truncated
	case 1:
		return ct, []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations: {kcp.io/cluster: fz-a}\ndata: {k: v}\n---\n&a [*a, *a]\n", url.PathEscape(name)))
	case 2:
		garbage := make([]byte, f.rnd.Intn(300))
		f.rnd.Read(garbage)
		return ct, append([]byte("k8s\x00"), garbage...)
	case 3:
		if f.chance(0.1) {
			return ct, bytes.Repeat([]byte("a"), 3*1024*1024+f.rnd.Intn(2*1024*1024))
		}
		return ct, nil
	default:
		return ct, []byte(obj)
	}
}

func (f *fuzzer) request() fuzzRequest {
	if f.chance(0.3) {
		return f.wellFormed()
	}
	r := fuzzRequest{header: http.Header{}}
	r.watch = f.chance(0.05)
	if r.watch {
		r.method = http.MethodGet
	} else {
		r.method = f.pick("GET", "GET", "GET", "GET", "GET", "GET", "POST", "POST", "PUT", "PATCH", "PATCH", "DELETE", "HEAD", "OPTIONS", "FUZZ")
	}
	r.path = "/clusters/" + f.cluster() + f.path()
	r.query = f.query(r.watch)
	// The legacy watch paths stream whatever the query says, and so does
	// the first of two watch parameters.
	r.watch = r.watch || strings.Contains(r.path, "/watch/") || strings.Contains(r.query, "watch=1&watch=0")
	if r.method != http.MethodGet && r.method != http.MethodHead || f.chance(0.05) {
		r.contentType, r.body = f.body()
	}
	r.accept = f.pick("application/json", "application/json", "application/vnd.kubernetes.protobuf", "application/yaml",
		"application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
		"application/vnd.kubernetes.protobuf;stream=watch", "application/cbor", "*/*", "", "text/html", "application/json;as=Garbage")
	if f.chance(0.05) {
		r.header.Set("Impersonate-User", f.pick("system:admin", "user-a", "system:serviceaccount:default:default"))
		if f.chance(0.5) {
			r.header.Add("Impersonate-Group", "system:masters")
		}
	}
	if f.chance(0.03) {
		r.header.Set("X-Remote-User", "system:admin")
		r.header.Set("X-Remote-Group", "system:masters")
	}
	if f.chance(0.03) {
		r.header.Set("Content-Encoding", f.pick("gzip", "x"))
	}
	return r
}

// wellFormed returns a request the attacker may well be allowed to make:
// a read or write of a Secret or ConfigMap in its own cluster (or a
// sibling's, by path tricks), with a body of the right kind that names the
// victim's cluster where it can, so that the answers come from storage.
func (f *fuzzer) wellFormed() fuzzRequest {
	r := fuzzRequest{header: http.Header{}, accept: f.pick("application/json", "application/vnd.kubernetes.protobuf", "application/yaml", "application/json;as=Table;v=v1;g=meta.k8s.io")}
	apiVersion, prefix, kind, resource := "v1", "/api/v1", "ConfigMap", "configmaps"
	switch f.rnd.Intn(3) {
	case 0:
		kind, resource = "Secret", "secrets"
	case 1:
		apiVersion, prefix, kind, resource = "fuzz.example.com/v1", "/apis/fuzz.example.com/v1", "Widget", "widgets"
	}
	cluster := string(fuzzAttacker)
	if f.chance(0.1) {
		cluster = f.cluster()
	}
	ns := f.pick("default", "default", "fz", "other")
	name := f.pick("victim", "marked", "n1", "n2", "n3")
	collection := "/clusters/" + cluster + prefix + "/namespaces/" + ns + "/" + resource
	if f.chance(0.2) {
		collection = "/clusters/" + cluster + prefix + "/" + resource
	}
	object := "/clusters/" + cluster + prefix + "/namespaces/" + ns + "/" + resource + "/" + name
	if f.chance(0.1) {
		object += "/" + f.pick("status", "scale")
	}
	forged := f.pick(`"kcp.io/cluster":"fz-a"`, `"kcp.io/cluster":"*"`, `"kcp.io/cluster":""`, `"note":"x"`)
	owner := ""
	if f.chance(0.2) {
		owner = `,"ownerReferences":[{"apiVersion":"v1","kind":"Secret","name":"victim","uid":"` + f.pick("x", "00000000-0000-0000-0000-000000000000") + `"}]`
	}
	rv := ""
	if f.chance(0.3) {
		rv = `,"resourceVersion":"` + strconv.FormatInt(f.rv-f.rnd.Int63n(20), 10) + `"`
	}
	data := `"data":{"k":"v"}`
	switch kind {
	case "Secret":
		data = `"stringData":{"k":"v"}`
	case "Widget":
		data = `"spec":{"secret":"v"},"status":{"x":1}`
	}
	body := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q,"namespace":%q,"labels":{"fz":"1"},"annotations":{%s}%s%s},%s}`,
		apiVersion, kind, name, ns, forged, owner, rv, data)
	q := url.Values{}
	switch f.rnd.Intn(8) {
	case 0:
		r.method, r.path, r.contentType, r.body = http.MethodPost, collection, "application/json", []byte(body)
	case 1:
		r.method, r.path, r.contentType, r.body = http.MethodPut, object, "application/json", []byte(body)
	case 2:
		r.method, r.path = http.MethodPatch, object
		r.contentType = f.pick("application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml", "application/json-patch+json")
		switch r.contentType {
		case "application/json-patch+json":
			r.body = []byte(`[{"op":"add","path":"/metadata/annotations","value":{` + forged + `}},{"op":"replace","path":"/metadata/name","value":"victim"}]`)
		case "application/apply-patch+yaml":
			r.body = []byte(body)
			q.Set("fieldManager", "fz")
			q.Set("force", "true")
		default:
			r.body = []byte(`{"metadata":{"annotations":{` + forged + `}` + rv + `}}`)
		}
	case 3:
		r.method, r.path = http.MethodDelete, object
		if f.chance(0.5) {
			r.contentType = "application/json"
			r.body = []byte(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"` + strconv.FormatInt(f.rv, 10) + `"}}`)
		}
	case 4:
		r.method, r.path = http.MethodDelete, collection
		q.Set("labelSelector", f.pick("fz=1", "nothing=here"))
		q.Set("dryRun", "All")
	case 5:
		r.method, r.path = http.MethodGet, collection
		r.watch = true
		q.Set("watch", "1")
		q.Set("timeoutSeconds", "1")
		q.Set("resourceVersion", strconv.FormatInt(f.rv-f.rnd.Int63n(30), 10))
	case 6:
		r.method, r.path = http.MethodGet, object
		if f.chance(0.5) {
			q.Set("resourceVersion", f.pick("0", strconv.FormatInt(f.rv, 10)))
		}
	default:
		r.method, r.path = http.MethodGet, collection
		q.Set("limit", f.pick("1", "2", "500"))
		q.Set("resourceVersion", f.pick("", "0", strconv.FormatInt(f.rv, 10)))
		if q.Get("resourceVersion") != "" {
			q.Set("resourceVersionMatch", f.pick("NotOlderThan", "Exact"))
		}
		if f.chance(0.5) {
			q.Set("continue", f.continueToken())
			q.Del("resourceVersion")
			q.Del("resourceVersionMatch")
		}
		if f.chance(0.3) {
			q.Set("fieldSelector", f.pick("metadata.name=victim", "metadata.namespace=default", "kcp.io/cluster=fz-a"))
		}
	}
	r.query = q.Encode()
	return r
}

// leaksFuzzMarker tells whether an answer holds the victim's marker.
func leaksFuzzMarker(body []byte) bool {
	return bytes.Contains(body, []byte(fuzzMarker)) || bytes.Contains(body, []byte(base64.StdEncoding.EncodeToString([]byte(fuzzMarker))))
}

// TestRequestFuzzer sends a few thousand random requests as the admin of
// one logical cluster and checks that none gets a 5xx, none makes the shard
// panic, and none answers with data of another cluster. TESSERA_FUZZ_SEED
// replays a run; TESSERA_FUZZ_REQUESTS and TESSERA_FUZZ_TIME change its
// length.
func TestRequestFuzzer(t *testing.T) {
	seed := time.Now().UnixNano()
	if v := os.Getenv(fuzzSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", fuzzSeedEnv, v, err)
		}
	}
	count := 5000
	if v := os.Getenv(fuzzRequestsEnv); v != "" {
		var err error
		if count, err = strconv.Atoi(v); err != nil {
			t.Fatalf("%s=%q: %v", fuzzRequestsEnv, v, err)
		}
	}
	limit := 20 * time.Second
	if v := os.Getenv(fuzzTimeEnv); v != "" {
		var err error
		if limit, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s=%q: %v", fuzzTimeEnv, v, err)
		}
	}
	t.Logf("fuzzing with %s=%d, %d requests in at most %s", fuzzSeedEnv, seed, count, limit)

	var panicsMu sync.Mutex
	var panics []string
	handlers := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(append([]func(context.Context, any){}, handlers...), func(_ context.Context, r any) {
		if r == http.ErrAbortHandler {
			return
		}
		panicsMu.Lock()
		defer panicsMu.Unlock()
		panics = append(panics, fmt.Sprint(r))
	})
	t.Cleanup(func() { utilruntime.PanicHandlers = handlers })

	s := framework.StartShard(t, withTokens(t, fuzzToken+",user-fz,user-fz-uid,\"team-fz\""))
	for _, c := range []logicalcluster.Name{fuzzVictim, fuzzAttacker} {
		createCluster(t, s, c)
	}
	// Both clusters hold the same names; only the victim's hold the marker.
	for c, value := range map[logicalcluster.Name]string{fuzzVictim: fuzzMarker, fuzzAttacker: "attacker-value"} {
		client := kube(t, s, c)
		for _, name := range []string{"victim", "marked"} {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fz": "1"}, Annotations: map[string]string{"note": value}},
				StringData: map[string]string{"password": value}}
			if _, err := client.CoreV1().Secrets("default").Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fz": "1"}}, Data: map[string]string{"k": value}}
			if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Both clusters serve a CRD of the same name; the victim's Widget holds
	// the marker too.
	for c, value := range map[logicalcluster.Name]string{fuzzVictim: fuzzMarker, fuzzAttacker: "attacker-value"} {
		client, err := dynamic.NewForConfig(s.Config(c))
		if err != nil {
			t.Fatal(err)
		}
		crd := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(fuzzWidgetsCRD), &crd.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "widgets served in "+string(c), func(ctx context.Context) (bool, error) {
			w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "fuzz.example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "victim", "labels": map[string]any{"fz": "1"}}, "spec": map[string]any{"secret": value}}}
			_, err := client.Resource(fuzzWidgetsGVR).Namespace("default").Create(ctx, w, metav1.CreateOptions{})
			return err == nil, err
		})
	}
	bindClusterRole(t, s, fuzzAttacker, "", "user-fz-admin", "cluster-admin", authzUser("user-fz"))
	eventuallyAllowed(t, "user-fz administers "+string(fuzzAttacker), func(ctx context.Context) error {
		_, err := tokenClient(t, s, fuzzAttacker, fuzzToken).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
		return err
	})

	cfg := rest.AnonymousClientConfig(s.Config(""))
	cfg.BearerToken = fuzzToken
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: transport}

	written, err := kube(t, s, fuzzVictim).CoreV1().Secrets("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := strconv.ParseInt(written.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	f := &fuzzer{rnd: rand.New(rand.NewSource(seed)), rv: rv}
	t.Logf("the victim's data was written by resourceVersion %d", rv)
	requests := make([]fuzzRequest, count)
	for i := range requests {
		requests[i] = f.request()
	}

	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	var (
		mu       sync.Mutex
		failures int
		codes    = map[int]int{}
		sent     int
	)
	fail := func(i int, r fuzzRequest, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures++
		if failures <= 20 {
			t.Errorf("request %d (%s=%d): %s: %s", i, fuzzSeedEnv, seed, r, fmt.Sprintf(format, args...))
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := requests[i]
				code, body, err := sendFuzzRequest(ctx, client, s.URL, r)
				if ctx.Err() != nil {
					continue // out of time: the answer tells nothing
				}
				mu.Lock()
				codes[code]++
				sent++
				mu.Unlock()
				switch {
				case err != nil:
					fail(i, r, "no answer: %v", err)
				case code == http.StatusGatewayTimeout && (bytes.Contains(body, []byte("ResourceVersionTooLarge")) || inTheFuture(r, rv)):
					// As from kube-apiserver: a read at a resourceVersion
					// the shard has not reached waits, then gives up.
				case code >= 500:
					fail(i, r, "%d %s", code, truncate(string(body), 500))
				}
				if leaksFuzzMarker(body) {
					fail(i, r, "the answer holds the victim's marker: %s", truncate(string(body), 2000))
				}
			}
		}()
	}
feed:
	for i := range requests {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	t.Logf("%d of %d requests in %s, answers by code: %v", sent, count, time.Since(start).Round(time.Millisecond), codes)
	if sent < count/2 {
		t.Errorf("only %d of %d requests were answered within the time limit", sent, count)
	}
	panicsMu.Lock()
	defer panicsMu.Unlock()
	for _, p := range panics {
		t.Errorf("the shard panicked (%s=%d): %s", fuzzSeedEnv, seed, p)
	}
}

// inTheFuture tells whether r reads at a resourceVersion far beyond rv
// (for HEAD, whose 504 has no body to tell why).
func inTheFuture(r fuzzRequest, rv int64) bool {
	q, err := url.ParseQuery(r.query)
	if err != nil {
		return false
	}
	v, err := strconv.ParseUint(q.Get("resourceVersion"), 10, 64)
	return err == nil && v > uint64(rv)+100000
}

// sendFuzzRequest sends r and returns the code and up to 4 MiB of the body.
// A watch is read for at most two seconds.
func sendFuzzRequest(ctx context.Context, client *http.Client, base string, r fuzzRequest) (int, []byte, error) {
	timeout := 20 * time.Second
	if r.watch {
		timeout = 2 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(rctx, r.method, base, body)
	if err != nil {
		return 0, nil, err
	}
	// The path goes as generated, escapes and dot segments included.
	req.URL.Opaque = "//" + req.URL.Host + r.path
	req.URL.RawQuery = r.query
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		if r.watch && errors.Is(err, context.DeadlineExceeded) {
			return 0, nil, nil
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil && r.watch && errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return resp.StatusCode, data, err
}
