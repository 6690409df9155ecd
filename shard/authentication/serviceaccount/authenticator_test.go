package serviceaccount

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestAuthenticateToken(t *testing.T) {
	const a, b = logicalcluster.Name("a"), logicalcluster.Name("b")
	saUser := func(cluster logicalcluster.Name, withJTI bool) func(t *testing.T, u user.Info) {
		return func(t *testing.T, u user.Info) {
			t.Helper()
			if u.GetName() != "system:serviceaccount:default:robot" || u.GetUID() != "uid-1" {
				t.Errorf("user %q uid %q", u.GetName(), u.GetUID())
			}
			if diff := cmp.Diff([]string{"system:serviceaccounts", "system:serviceaccounts:default"}, u.GetGroups()); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			extra := u.GetExtra()
			if diff := cmp.Diff([]string{cluster.String()}, extra[ClusterNameExtraKey]); diff != "" {
				t.Errorf("cluster extra (-want +got):\n%s", diff)
			}
			if ids := extra[user.CredentialIDKey]; withJTI != (len(ids) == 1 && strings.HasPrefix(ids[0], "JTI=")) {
				t.Errorf("credential ID %q, want one: %v", ids, withJTI)
			}
		}
	}

	for _, tc := range []struct {
		name string
		// setup returns the token and the context to authenticate in.
		setup   func(t *testing.T, e *env) (string, context.Context)
		wantOK  bool
		wantErr string
		// wantAudiences are the audiences of the response.
		wantAudiences []string
		check         func(t *testing.T, u user.Info)
	}{
		{
			name: "bound token",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				return e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1")), t.Context()
			},
			wantOK: true, wantAudiences: testAudiences, check: saUser(a, true),
		},
		{
			name: "bound token used in another cluster authenticates with its own cluster",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				return e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1")), inCluster(t.Context(), b)
			},
			wantOK: true, wantAudiences: testAudiences, check: saUser(a, true),
		},
		{
			name: "bound token for a service account that only exists in another cluster",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				sa := e.addServiceAccount(b, "default", "robot", "uid-1")
				return e.bound(t, a, sa), t.Context()
			},
			wantErr: "service account default/robot of logical cluster a does not exist",
		},
		{
			name: "service account not yet in the cache",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				sa := e.addServiceAccount(a, "default", "robot", "uid-1")
				e.cachedSAs.remove(a, "default", "robot")
				return e.bound(t, a, sa), t.Context()
			},
			wantOK: true, wantAudiences: testAudiences, check: saUser(a, true),
		},
		{
			name: "stale cache with an older UID",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				e.addServiceAccount(a, "default", "robot", "uid-0")
				sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "default", UID: "uid-1"}}
				e.liveSAs.put(a, sa)
				return e.bound(t, a, sa), t.Context()
			},
			wantOK: true, wantAudiences: testAudiences, check: saUser(a, true),
		},
		{
			name: "deleted service account",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"))
				e.removeServiceAccount(a, "default", "robot")
				return token, t.Context()
			},
			wantErr: "does not exist",
		},
		{
			name: "service account recreated with a new UID",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"))
				e.addServiceAccount(a, "default", "robot", "uid-2")
				return token, t.Context()
			},
			wantErr: "has UID uid-2, the token was issued for uid-1",
		},
		{
			name: "service account being deleted",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				sa := e.addServiceAccount(a, "default", "robot", "uid-1")
				token := e.bound(t, a, sa)
				now := metav1.Now()
				sa.DeletionTimestamp = &now
				return token, t.Context()
			},
			wantErr: "is being deleted",
		},
		{
			name: "expired token",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"))
				e.clock.SetTime(e.clock.Now().Add(time.Hour + leeway + time.Second))
				return token, t.Context()
			},
			wantErr: "the token has expired",
		},
		{
			name: "expired within the leeway",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"))
				e.clock.SetTime(e.clock.Now().Add(time.Hour + leeway/2))
				return token, t.Context()
			},
			wantOK: true, wantAudiences: testAudiences, check: saUser(a, true),
		},
		{
			name: "token from the future",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"))
				e.clock.SetTime(e.clock.Now().Add(-2 * leeway))
				return token, t.Context()
			},
			wantErr: "not valid yet",
		},
		{
			name: "signed with another key",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				other, err := NewIssuer(testKeys()["rsa-other"], testIssuer, e.clock)
				if err != nil {
					t.Fatal(err)
				}
				issued, err := other.Bound(BoundToken{Cluster: a, ServiceAccount: e.addServiceAccount(a, "default", "robot", "uid-1"), Audiences: testAudiences, Expiration: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				return issued.Token, t.Context()
			},
			wantErr: "no verification key",
		},
		{
			name: "another issuer is not ours",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				other, err := NewIssuer(testKeys()["rsa"], "https://elsewhere", e.clock)
				if err != nil {
					t.Fatal(err)
				}
				issued, err := other.Bound(BoundToken{Cluster: a, ServiceAccount: e.addServiceAccount(a, "default", "robot", "uid-1"), Audiences: testAudiences, Expiration: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				return issued.Token, t.Context()
			},
		},
		{
			name:  "a static token is not ours",
			setup: func(t *testing.T, e *env) (string, context.Context) { return "static-token", t.Context() },
		},
		{
			name: "wrong audience",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				return e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), func(bt *BoundToken) { bt.Audiences = []string{"vault"} }), t.Context()
			},
			wantErr: `audiences ["vault"] are not valid`,
		},
		{
			name: "audience the request asks for",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), func(bt *BoundToken) { bt.Audiences = []string{"vault", "other"} })
				return token, authenticator.WithAudiences(t.Context(), authenticator.Audiences{"vault"})
			},
			wantOK: true, wantAudiences: []string{"vault"}, check: saUser(a, true),
		},
		{
			name: "bound to a secret that exists",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				e.addSecret(a, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default", UID: "s-uid"}})
				return e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), func(bt *BoundToken) {
					bt.Secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: "s-uid"}}
				}), t.Context()
			},
			wantOK: true, wantAudiences: testAudiences, check: saUser(a, true),
		},
		{
			name: "bound to a deleted secret",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				return e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), func(bt *BoundToken) {
					bt.Secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: "s-uid"}}
				}), t.Context()
			},
			wantErr: "secret default/s of logical cluster a does not exist",
		},
		{
			name: "bound to a recreated secret",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				e.addSecret(a, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default", UID: "s-uid-2"}})
				return e.bound(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), func(bt *BoundToken) {
					bt.Secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: "s-uid"}}
				}), t.Context()
			},
			wantErr: "has UID s-uid-2, the token is bound to s-uid",
		},
		{
			name: "legacy token",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				return e.legacy(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), "robot-token"), t.Context()
			},
			wantOK: true, check: saUser(a, false),
		},
		{
			name: "legacy token the cache has not seen yet",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.legacy(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), "robot-token")
				e.cachedSecs.put(a, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "default"}})
				return token, t.Context()
			},
			wantOK: true, check: saUser(a, false),
		},
		{
			name: "legacy token whose secret is gone",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.legacy(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), "robot-token")
				e.removeSecret(a, "default", "robot-token")
				return token, t.Context()
			},
			wantErr: "secret default/robot-token of logical cluster a does not exist",
		},
		{
			name: "legacy token whose secret was emptied",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.legacy(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), "robot-token")
				e.addSecret(a, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "default"}})
				return token, t.Context()
			},
			wantErr: "does not match the one in secret",
		},
		{
			name: "legacy token whose secret holds another token",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				sa := e.addServiceAccount(a, "default", "robot", "uid-1")
				token := e.legacy(t, a, sa, "robot-token")
				e.addSecret(a, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "default"},
					Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte("something else")}})
				return token, t.Context()
			},
			wantErr: "does not match the one in secret",
		},
		{
			name: "legacy token of a recreated service account",
			setup: func(t *testing.T, e *env) (string, context.Context) {
				token := e.legacy(t, a, e.addServiceAccount(a, "default", "robot", "uid-1"), "robot-token")
				e.addServiceAccount(a, "default", "robot", "uid-2")
				return token, t.Context()
			},
			wantErr: "has UID uid-2",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			token, ctx := tc.setup(t, e)
			resp, ok, err := e.authn.AuthenticateToken(ctx, token)
			if ok != tc.wantOK {
				t.Fatalf("authenticated = %v (err %v), want %v", ok, err, tc.wantOK)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.wantAudiences, []string(resp.Audiences)); diff != "" {
				t.Errorf("audiences (-want +got):\n%s", diff)
			}
			tc.check(t, resp.User)
		})
	}
}

func TestAuthenticateUsesTheCacheFirst(t *testing.T) {
	e := newEnv(t)
	token := e.bound(t, "a", e.addServiceAccount("a", "default", "robot", "uid-1"))
	for range 3 {
		if _, ok, err := e.authn.AuthenticateToken(t.Context(), token); !ok || err != nil {
			t.Fatalf("authenticate: %v %v", ok, err)
		}
	}
	if n := e.liveSAs.calls(); n != 0 {
		t.Errorf("%d live lookups with a warm cache, want none", n)
	}
}

func TestInRequestCluster(t *testing.T) {
	e := newEnv(t)
	token := e.bound(t, "a", e.addServiceAccount("a", "default", "robot", "uid-1"))
	static := authenticator.TokenFunc(func(_ context.Context, tok string) (*authenticator.Response, bool, error) {
		if tok != "static" {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: "alice"}}, true, nil
	})
	reviewer := InRequestCluster(authenticatorUnion{static, e.authn})

	for _, tc := range []struct {
		name    string
		ctx     context.Context
		token   string
		wantOK  bool
		wantErr bool
	}{
		{name: "service account token in its own cluster", ctx: inCluster(t.Context(), "a"), token: token, wantOK: true},
		{name: "service account token in another cluster", ctx: inCluster(t.Context(), "b"), token: token, wantErr: true},
		{name: "service account token across clusters", ctx: logicalcluster.WithCluster(t.Context(), logicalcluster.Cluster{Wildcard: true}), token: token, wantErr: true},
		{name: "service account token without a cluster", ctx: t.Context(), token: token, wantErr: true},
		// The shard's admins (tessera-virtual-workspaces) review tokens of
		// every cluster in system:admin.
		{name: "service account token in system:admin", ctx: inCluster(t.Context(), logicalcluster.SystemAdmin), token: token, wantOK: true},
		{name: "other tokens anywhere", ctx: inCluster(t.Context(), "b"), token: "static", wantOK: true},
		{name: "unknown tokens", ctx: inCluster(t.Context(), "a"), token: "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, err := reviewer.AuthenticateToken(tc.ctx, tc.token)
			if ok != tc.wantOK || (err != nil) != tc.wantErr {
				t.Errorf("authenticated %v, error %v; want %v, error %v", ok, err, tc.wantOK, tc.wantErr)
			}
		})
	}
}

// authenticatorUnion tries token authenticators in order.
type authenticatorUnion []authenticator.Token

func (u authenticatorUnion) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	for _, a := range u {
		if resp, ok, err := a.AuthenticateToken(ctx, token); ok || err != nil {
			return resp, ok, err
		}
	}
	return nil, false, nil
}
