package apiexport

import (
	"net/http/httptest"
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// TestClusterOf: the audit log names the consumer a request of the
// virtual workspace addresses.
func TestClusterOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		want logicalcluster.Cluster
		ok   bool
	}{
		{"/services/apiexport/root:wildwest:cowboys/wildwest.dev/clusters/*/apis/wildwest.dev/v1alpha1/cowboys", logicalcluster.Cluster{Wildcard: true}, true},
		{"/services/apiexport/root:wildwest:cowboys/wildwest.dev/clusters/2fx7qz1d/apis", logicalcluster.Cluster{Name: "2fx7qz1d"}, true},
		{"/services/apiexport/root:wildwest:cowboys/wildwest.dev/clusters/2fx7qz1d", logicalcluster.Cluster{Name: "2fx7qz1d"}, true},
		{"/services/apiexport/root:wildwest:cowboys/wildwest.dev", logicalcluster.Cluster{}, false},
		{"/services/apiexport/root/wildwest.dev/clusters/Not_Valid/apis", logicalcluster.Cluster{}, false},
		{"/services/initializingworkspaces/root:t/clusters/a", logicalcluster.Cluster{}, false},
	} {
		got, ok := ClusterOf(httptest.NewRequest("GET", tc.path, nil))
		if ok != tc.ok || got != tc.want {
			t.Errorf("ClusterOf(%s) = %v, %t; want %v, %t", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}
