package fairness

import (
	"context"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	fcrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestClusterDigestNamesUsersByCluster(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"team", user.AllAuthenticated}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}
	info := &request.RequestInfo{IsResourceRequest: true, Verb: "list", Resource: "configmaps", Namespace: "default"}
	tests := []struct {
		name    string
		cluster *logicalcluster.Cluster
		u       user.Info
		want    string
	}{
		{"tenant in a", &logicalcluster.Cluster{Name: "a"}, alice, "a|alice"},
		{"same tenant in b", &logicalcluster.Cluster{Name: "b"}, alice, "b|alice"},
		{"sibling name", &logicalcluster.Cluster{Name: "a-b"}, alice, "a-b|alice"},
		{"shard admin keeps its name", &logicalcluster.Cluster{Name: "a"}, admin, "admin"},
		{"wildcard", &logicalcluster.Cluster{Wildcard: true}, alice, "alice"},
		{"no cluster", nil, alice, "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.cluster != nil {
				ctx = logicalcluster.WithCluster(ctx, *tt.cluster)
			}
			d := ClusterDigest(ctx, utilflowcontrol.RequestDigest{RequestInfo: info, User: tt.u})
			if got := d.User.GetName(); got != tt.want {
				t.Errorf("flow user %q, want %q", got, tt.want)
			}
			if got := d.User.GetGroups(); len(got) != len(tt.u.GetGroups()) {
				t.Errorf("groups changed: %v", got)
			}
			if d.RequestInfo != info {
				t.Error("request info replaced")
			}
		})
	}
}

func TestListsCostSeatsByTheirClustersObjects(t *testing.T) {
	f := &Fairness{}
	f.SetListCounter(func(cluster logicalcluster.Name, group, resource string) (int64, bool) {
		if group != "" || resource != "configmaps" {
			return 0, false
		}
		n, ok := map[logicalcluster.Name]int64{"big": 5000, "mid": 250}[cluster]
		return n, ok
	})
	upstream := func() fcrequest.WorkEstimate { return fcrequest.WorkEstimate{InitialSeats: 1} }
	list := &request.RequestInfo{IsResourceRequest: true, Verb: "list", Resource: "configmaps", Namespace: "default"}
	get := &request.RequestInfo{IsResourceRequest: true, Verb: "get", Resource: "configmaps", Namespace: "default", Name: "x"}
	watch := &request.RequestInfo{IsResourceRequest: true, Verb: "watch", Resource: "configmaps", Namespace: "default"}
	resumed := &request.RequestInfo{IsResourceRequest: true, Verb: "watch", Resource: "configmaps", Namespace: "default"}
	tests := []struct {
		name    string
		cluster logicalcluster.Cluster
		info    *request.RequestInfo
		want    uint64
		// hold is how long the seats stay taken after the request.
		hold time.Duration
	}{
		{"list in a big cluster", logicalcluster.Cluster{Name: "big"}, list, 10, 50 * time.Millisecond},
		{"list in a middling cluster", logicalcluster.Cluster{Name: "mid"}, list, 3, 2500 * time.Microsecond},
		{"list in a small cluster", logicalcluster.Cluster{Name: "small"}, list, 1, 0},
		{"get in a big cluster", logicalcluster.Cluster{Name: "big"}, get, 1, 0},
		{"wildcard list", logicalcluster.Cluster{Wildcard: true}, list, 1, 0},
		{"watch from the current objects", logicalcluster.Cluster{Name: "big"}, watch, 10, 50 * time.Millisecond},
		{"watch from a resourceVersion", logicalcluster.Cluster{Name: "big"}, resumed, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := logicalcluster.WithCluster(t.Context(), tt.cluster)
			if tt.info == resumed {
				ctx = context.WithValue(ctx, initialEventsKey{}, false)
			}
			est := f.listEstimator(ctx, utilflowcontrol.RequestDigest{RequestInfo: tt.info}, upstream)
			w := est()
			if w.InitialSeats != tt.want {
				t.Errorf("seats %d, want %d", w.InitialSeats, tt.want)
			}
			if w.AdditionalLatency != tt.hold || (tt.hold > 0 && w.FinalSeats != w.InitialSeats) {
				t.Errorf("seats held %d for %s after the request, want %d for %s", w.FinalSeats, w.AdditionalLatency, tt.want, tt.hold)
			}
		})
	}
}
