package customresources

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/server/v3/embed"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"

	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/shard/storage"
)

// send sends a request with a body and content type and returns the
// status code and the Status of the response (empty when it is none).
func send(t *testing.T, method, url, contentType, accept string, body []byte) (int, metav1.Status) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var st metav1.Status
	if json.Unmarshal(data, &st) != nil || st.Kind != "Status" {
		st = metav1.Status{}
	}
	return resp.StatusCode, st
}

// TestMediaTypes checks that custom resources are only read from and
// written as JSON, YAML (and CBOR when enabled), as upstream: a protobuf
// body gets 415, an Accept that allows only protobuf gets 406.
func TestMediaTypes(t *testing.T) {
	url := startEtcd(t)
	s := newTestServer(t, &RESTOptionsGetter{Backend: backend(url), Decorator: storage.Decorator(false)})
	s.crds.set("a", widgetCRD("a", "integer"))
	a := s.client(t, "a").Resource(widgets).Namespace("default")
	if _, err := a.Create(t.Context(), widget("w", map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	base := s.server.URL + "/clusters/a/apis/example.com/v1/namespaces/default/widgets"
	// Whatever the bytes, they are not a Widget in protobuf.
	body := []byte("k8s\x00\x0a\x0f\x0a\x0eexample.com/v1\x12\x06Widget")
	const protobuf = "application/vnd.kubernetes.protobuf"

	for _, tc := range []struct{ name, method, url string }{
		{"create", http.MethodPost, base},
		{"create, fieldValidation=Ignore", http.MethodPost, base + "?fieldValidation=Ignore"},
		{"create, fieldValidation=Strict", http.MethodPost, base + "?fieldValidation=Strict"},
		{"update", http.MethodPut, base + "/w"},
		{"update status", http.MethodPut, base + "/w/status"},
		{"update status, fieldValidation=Ignore", http.MethodPut, base + "/w/status?fieldValidation=Ignore"},
	} {
		t.Run("protobuf body: "+tc.name, func(t *testing.T) {
			code, st := send(t, tc.method, tc.url, protobuf, "", body)
			if code != http.StatusUnsupportedMediaType || st.Reason != metav1.StatusReasonUnsupportedMediaType ||
				!strings.Contains(st.Message, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml") ||
				strings.Contains(st.Message, protobuf) {
				t.Errorf("%s %s: %d %+v, want 415 listing JSON and YAML but not protobuf", tc.method, tc.url, code, st)
			}
		})
	}
	t.Run("JSON body still works", func(t *testing.T) {
		w, err := a.Get(t.Context(), "w", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(w.Object)
		if code, st := send(t, http.MethodPut, base+"/w", "application/json", "", data); code != http.StatusOK {
			t.Errorf("JSON update: %d %+v", code, st)
		}
	})

	for _, tc := range []struct {
		name, url, accept string
		want              int
	}{
		{"get, protobuf only", base + "/w", protobuf, http.StatusNotAcceptable},
		{"list, protobuf only", base, protobuf, http.StatusNotAcceptable},
		{"watch, protobuf only", base + "?watch=true&timeoutSeconds=1", protobuf, http.StatusNotAcceptable},
		{"get, protobuf or JSON", base + "/w", protobuf + ", application/json", http.StatusOK},
		{"table in protobuf (JSON and YAML only, as upstream)", base, protobuf + ";as=Table;v=v1;g=meta.k8s.io", http.StatusNotAcceptable},
		{"metadata in protobuf", base, protobuf + ";as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", http.StatusOK},
	} {
		t.Run("accept: "+tc.name, func(t *testing.T) {
			code, st := send(t, http.MethodGet, tc.url, "", tc.accept, nil)
			if code != tc.want {
				t.Errorf("GET %s with Accept %s: %d %+v, want %d", tc.url, tc.accept, code, st, tc.want)
			}
		})
	}
}

func TestNilDecoder(t *testing.T) {
	ns := newNegotiatedSerializer(newScheme(), newObjectTyper(newScheme()), nil, &crdSchemas{}, schema.GroupVersionKind{})
	_, _, err := ns.DecoderToVersion(nil, schema.GroupVersion{Group: "example.com", Version: "v1"}).Decode([]byte("{}"), nil, &unstructured.Unstructured{})
	if err == nil || !strings.Contains(err.Error(), "accepted media types include: application/json") {
		t.Errorf("decode with no decoder: err = %v, want an unsupported media type", err)
	}
	if _, _, err := (coercingDecoder{}).Decode([]byte("{}"), nil, nil); err == nil {
		t.Error("coercing decode with no delegate: no error")
	}
}

// TestWebhookConversion checks that CRDs that convert through a webhook get
// a clear Status, not a bare 500, and do not spoil wildcard reads.
func TestWebhookConversion(t *testing.T) {
	url := startEtcd(t)
	s := newTestServer(t, &RESTOptionsGetter{Backend: backend(url), Decorator: storage.Decorator(false)})
	s.crds.set("a", widgetCRD("a", "integer"))
	crd := widgetCRD("w", "integer")
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptrTo("https://example.com/convert")},
			ConversionReviewVersions: []string{"v1"},
		},
	}
	s.crds.set("w", crd)
	ctx := t.Context()
	w := s.client(t, "w").Resource(widgets).Namespace("default")

	check := func(what string, err error) {
		t.Helper()
		var se apierrors.APIStatus
		if !errors.As(err, &se) || se.Status().Code != http.StatusServiceUnavailable || !strings.Contains(se.Status().Message, "conversion webhooks are not supported") {
			t.Errorf("%s: err = %v, want 503 conversion webhooks are not supported", what, err)
		}
	}
	_, err := w.List(ctx, metav1.ListOptions{})
	check("list", err)
	_, err = w.Create(ctx, widget("x", map[string]any{"size": int64(1)}), metav1.CreateOptions{})
	check("create", err)
	_, err = w.Get(ctx, "x", metav1.GetOptions{})
	check("get", err)

	if _, err := s.client(t, "a").Resource(widgets).Namespace("default").Create(ctx, widget("y", map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := s.client(t, "*").Resource(widgets).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("wildcard list beside a webhook CRD: %v, err = %v; want a's widget", list, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// startEtcdWithLimit starts an embedded etcd that refuses requests larger
// than maxRequestBytes.
func startEtcdWithLimit(t *testing.T, maxRequestBytes uint) string {
	t.Helper()
	clientPort, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	peerPort, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true
	cfg.MaxRequestBytes = maxRequestBytes
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("etcd did not start")
	}
	return client.String()
}

// TestTooLarge checks that a custom resource too large for etcd gets 413,
// both when etcd refuses it (its request limit) and when the etcd client
// does (its send limit, 2 MiB).
func TestTooLarge(t *testing.T) {
	for _, tc := range []struct {
		name string
		etcd func(t *testing.T) string
		size int
	}{
		{"etcd's request limit", func(t *testing.T) string { return startEtcdWithLimit(t, 256*1024) }, 300 * 1024},
		{"the client's send limit", startEtcd, 2500 * 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, &RESTOptionsGetter{Backend: backend(tc.etcd(t)), Decorator: storage.Decorator(false)})
			s.crds.set("a", widgetCRD("a", "integer"))
			a := s.client(t, "a").Resource(widgets).Namespace("default")
			ctx := t.Context()
			big := strings.Repeat("x", tc.size)
			want := func(what string, err error) {
				t.Helper()
				if !apierrors.IsRequestEntityTooLargeError(err) {
					t.Errorf("%s: err = %.300v, want RequestEntityTooLarge", what, err)
				}
			}
			_, err := a.Create(ctx, widget("big", map[string]any{"color": big}), metav1.CreateOptions{})
			want("create", err)

			small, err := a.Create(ctx, widget("small", map[string]any{"color": "red"}), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_ = unstructured.SetNestedField(small.Object, big, "spec", "color")
			_, err = a.Update(ctx, small, metav1.UpdateOptions{})
			want("update", err)
			_, err = a.Patch(ctx, "small", types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"color":%q}}`, big)), metav1.PatchOptions{})
			want("merge patch", err)
			_, err = a.Patch(ctx, "small", types.MergePatchType, []byte(fmt.Sprintf(`{"status":{"phase":%q}}`, big)), metav1.PatchOptions{}, "status")
			want("status patch", err)
			if got, err := a.Get(ctx, "small", metav1.GetOptions{}); err != nil || nested(t, got, "spec", "color") != "red" {
				t.Errorf("after refused writes: %v, err = %v; want small unchanged", got, err)
			}
		})
	}
}

func TestAsTooLarge(t *testing.T) {
	sendLimit := status.Error(codes.ResourceExhausted, "trying to send message larger than max (3000000 vs. 2097152)")
	other := errors.New("etcdserver: request timed out")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"etcd's request limit", rpctypes.ErrRequestTooLarge, true},
		{"etcd's request limit, wrapped", fmt.Errorf("txn: %w", rpctypes.ErrRequestTooLarge), true},
		{"the client's send limit", sendLimit, true},
		{"another error", other, false},
		{"another resource exhausted", status.Error(codes.ResourceExhausted, "quota"), false},
		{"no error", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := asTooLarge(tc.err)
			if !tc.want {
				if got != tc.err {
					t.Errorf("asTooLarge(%v) = %v, want it unchanged", tc.err, got)
				}
				return
			}
			if st := responsewriters.ErrorToAPIStatus(got); st.Code != http.StatusRequestEntityTooLarge || st.Reason != metav1.StatusReasonRequestEntityTooLarge {
				t.Errorf("Status %+v, want 413 RequestEntityTooLarge", st)
			}
			// The endpoint handlers recognise etcd's error by its gRPC code
			// and message, and then retry without managedFields.
			coded, ok := got.(interface{ Code() codes.Code })
			s, _ := status.FromError(got)
			if !ok || coded.Code() != s.Code() || !strings.Contains(got.Error(), s.Message()) {
				t.Errorf("%v no longer reads as the gRPC error it was", got)
			}
		})
	}
}
