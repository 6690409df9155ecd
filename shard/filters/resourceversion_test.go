package filters

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestResourceVersionValidation pins which resourceVersion parameters reach
// storage: decimal revisions etcd can reach, and nothing else.
func TestResourceVersionValidation(t *testing.T) {
	reached := false
	h := WithResourceVersionValidation(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }), scheme.Codecs)
	for _, tc := range []struct {
		query   string
		pass    bool
		message string
	}{
		{query: "", pass: true},
		{query: "resourceVersion=", pass: true},
		{query: "resourceVersion=0", pass: true},
		{query: "resourceVersion=123", pass: true},
		{query: "resourceVersion=9223372036854775807", pass: true},
		{query: "resourceVersion=9223372036854775808", message: "larger than any revision"},
		{query: "resourceVersion=18446744073709551615&resourceVersionMatch=Exact", message: "larger than any revision"},
		{query: "resourceVersion=99999999999999999999", message: "non-negative integer"},
		{query: "resourceVersion=-1", message: "non-negative integer"},
		{query: "resourceVersion=0x10", message: "non-negative integer"},
		{query: "resourceVersion=1&resourceVersion=garbage", message: "non-negative integer"},
	} {
		reached = false
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/clusters/a/api/v1/configmaps?"+tc.query, nil))
		if reached != tc.pass {
			t.Errorf("%q: reached storage %v, want %v", tc.query, reached, tc.pass)
		}
		if tc.pass {
			continue
		}
		var status metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &status); err != nil {
			t.Errorf("%q: the answer is not a Status: %v: %s", tc.query, err, w.Body.String())
			continue
		}
		if w.Code != http.StatusBadRequest || status.Reason != metav1.StatusReasonBadRequest || !strings.Contains(status.Message, tc.message) {
			t.Errorf("%q: got %d %s %q, want 400 BadRequest with %q", tc.query, w.Code, status.Reason, status.Message, tc.message)
		}
	}
}
