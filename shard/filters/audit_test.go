package filters

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/audit"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestWithAuditAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target AuditTargetFunc
		want   map[string]string
	}{
		{
			name:   "cluster",
			target: fixedTarget(logicalcluster.Cluster{Name: "abc"}, ""),
			want:   map[string]string{"kcp.io/cluster": "abc", "tenancy.kcp.io/workspace": "abc"},
		},
		{
			name:   "cluster with its path",
			target: fixedTarget(logicalcluster.Cluster{Name: "abc", Path: "root:org"}, "root:org:team"),
			want:   map[string]string{"kcp.io/cluster": "abc", "tenancy.kcp.io/workspace": "abc", "kcp.io/path": "root:org:team"},
		},
		{
			name:   "wildcard",
			target: fixedTarget(logicalcluster.Cluster{Wildcard: true}, "ignored"),
			want:   map[string]string{"kcp.io/cluster": "*", "tenancy.kcp.io/workspace": "*"},
		},
		{
			name:   "no cluster",
			target: func(*http.Request) (logicalcluster.Cluster, string, bool) { return logicalcluster.Cluster{}, "", false },
			want:   map[string]string{},
		},
		{
			name:   "request context",
			target: RequestCluster,
			want:   map[string]string{"kcp.io/cluster": "system:admin", "tenancy.kcp.io/workspace": "system:admin"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got map[string]string
			var id string
			inner := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				ac := audit.AuditContextFrom(req.Context())
				got = maps.Clone(ac.GetEventAnnotations())
				id = string(ac.AuditID())
			})
			// The generic chain's WithAuditInit keeps the audit context
			// and its annotations.
			h := WithCluster(WithAuditAnnotations(genericapifilters.WithAuditInit(inner), tc.target), nil)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/namespaces", nil))
			if got == nil {
				got = map[string]string{}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("annotations = %v, want %v", got, tc.want)
			}
			if id == "" {
				t.Errorf("the audit context has no audit ID")
			}
		})
	}
}

func fixedTarget(c logicalcluster.Cluster, path string) AuditTargetFunc {
	return func(*http.Request) (logicalcluster.Cluster, string, bool) { return c, path, true }
}
