package serviceaccount

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestLookup(t *testing.T) {
	sa := func(uid string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: types.UID(uid)}}
	}
	for _, tc := range []struct {
		name         string
		cached, live *corev1.ServiceAccount
		noLive       bool
		uid          string
		wantUID      string
		wantNotFound bool
		wantLive     int
	}{
		{name: "cache hit", cached: sa("1"), live: sa("1"), wantUID: "1"},
		{name: "cache hit with the wanted UID", cached: sa("1"), live: sa("2"), uid: "1", wantUID: "1"},
		{name: "cache miss", live: sa("1"), wantUID: "1", wantLive: 1},
		{name: "stale UID in the cache", cached: sa("1"), live: sa("2"), uid: "2", wantUID: "2", wantLive: 1},
		{name: "missing everywhere", wantNotFound: true, wantLive: 1},
		{name: "cache only", noLive: true, live: sa("1"), wantNotFound: true},
		{name: "cache only with another UID", noLive: true, cached: sa("1"), uid: "2", wantUID: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cached, live := newStore[*corev1.ServiceAccount](), newStore[*corev1.ServiceAccount]()
			if tc.cached != nil {
				cached.put("a", tc.cached)
			}
			if tc.live != nil {
				live.put("a", tc.live)
			}
			l := Lookup[*corev1.ServiceAccount]{Cached: cached.get, Live: live.get}
			if tc.noLive {
				l.Live = nil
			}
			got, err := l.Get(t.Context(), "a", "ns", "robot", HasUID[*corev1.ServiceAccount](types.UID(tc.uid)))
			if tc.wantNotFound != apierrors.IsNotFound(err) || (!tc.wantNotFound && err != nil) {
				t.Fatalf("error %v, want NotFound: %v", err, tc.wantNotFound)
			}
			if err == nil && string(got.UID) != tc.wantUID {
				t.Errorf("UID %q, want %q", got.UID, tc.wantUID)
			}
			if live.calls() != tc.wantLive {
				t.Errorf("%d live lookups, want %d", live.calls(), tc.wantLive)
			}
		})
	}
}
