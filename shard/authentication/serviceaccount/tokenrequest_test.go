package serviceaccount

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// warnings records the warnings of a request.
type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

func requestContext(ctx context.Context, cluster logicalcluster.Name, namespace string) context.Context {
	return genericapirequest.WithNamespace(inCluster(ctx, cluster), namespace)
}

func TestTokenRequest(t *testing.T) {
	e := newEnv(t)
	sa := e.addServiceAccount("a", "default", "robot", "uid-1")
	var w warnings
	ctx := warning.WithWarningRecorder(requestContext(t.Context(), "a", "default"), &w)

	var validated bool
	out, err := e.tokens.Create(ctx, "robot", &authenticationv1.TokenRequest{}, func(_ context.Context, obj runtime.Object) error {
		validated = obj.(*authenticationv1.TokenRequest).Spec.Audiences != nil
		return nil
	}, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !validated {
		t.Error("create validation was not called with the defaulted request")
	}
	tr := out.(*authenticationv1.TokenRequest)
	if tr.Name != "robot" || tr.Namespace != "default" || *tr.Spec.ExpirationSeconds != 3600 || len(tr.Spec.Audiences) != 1 {
		t.Errorf("defaulted request %+v", tr)
	}
	if want := e.clock.Now().Add(time.Hour); !tr.Status.ExpirationTimestamp.Time.Equal(want) {
		t.Errorf("expires %v, want %v", tr.Status.ExpirationTimestamp, want)
	}
	resp, ok, err := e.authn.AuthenticateToken(t.Context(), tr.Status.Token)
	if !ok || err != nil {
		t.Fatalf("the issued token does not authenticate: %v", err)
	}
	if resp.User.GetName() != "system:serviceaccount:default:robot" || resp.User.GetUID() != string(sa.UID) || resp.User.GetExtra()[ClusterNameExtraKey][0] != "a" {
		t.Errorf("user %+v", resp.User)
	}
	if len(w) != 0 {
		t.Errorf("warnings %q", w)
	}

	// A longer lifetime than the maximum is shortened, with a warning.
	out, err = e.tokens.Create(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](365 * 24 * 3600)}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr = out.(*authenticationv1.TokenRequest)
	if *tr.Spec.ExpirationSeconds != 48*3600 || !tr.Status.ExpirationTimestamp.Time.Equal(e.clock.Now().Add(48*time.Hour)) || len(w) != 1 {
		t.Errorf("long request: expirationSeconds %d, expires %v, warnings %q", *tr.Spec.ExpirationSeconds, tr.Status.ExpirationTimestamp, w)
	}
}

func TestTokenRequestBoundToSecret(t *testing.T) {
	e := newEnv(t)
	e.addServiceAccount("a", "default", "robot", "uid-1")
	e.addSecret("a", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default", UID: "s-uid"}})
	ctx := requestContext(t.Context(), "a", "default")
	ref := &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s"}
	out, err := e.tokens.Create(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := out.(*authenticationv1.TokenRequest).Status.Token
	if _, ok, err := e.authn.AuthenticateToken(t.Context(), token); !ok {
		t.Fatalf("token bound to an existing secret: %v", err)
	}
	e.removeSecret("a", "default", "s")
	if _, ok, _ := e.authn.AuthenticateToken(t.Context(), token); ok {
		t.Error("a token bound to a deleted secret still authenticates")
	}
}

func TestTokenRequestRefusals(t *testing.T) {
	secretRef := func(uid string) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s", UID: types.UID(uid)}
	}
	for _, tc := range []struct {
		name    string
		ctx     func(context.Context) context.Context
		account string
		request authenticationv1.TokenRequest
		check   func(error) bool
		wantMsg string
	}{
		{name: "missing service account", account: "ghost", check: apierrors.IsNotFound},
		{name: "service account of another cluster", ctx: func(ctx context.Context) context.Context { return requestContext(ctx, "b", "default") }, check: apierrors.IsNotFound},
		{name: "across clusters", ctx: func(ctx context.Context) context.Context {
			return genericapirequest.WithNamespace(logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Wildcard: true}), "default")
		}, check: apierrors.IsBadRequest},
		{name: "too short", request: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](60)}}, check: apierrors.IsInvalid, wantMsg: "less than 10 minutes"},
		{name: "too long", request: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](1 << 33)}}, check: apierrors.IsInvalid},
		{name: "other name in the body", request: authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, check: apierrors.IsInvalid, wantMsg: "must match the service account name"},
		{name: "other namespace in the body", request: authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "other"}}, check: apierrors.IsInvalid},
		{name: "empty audience", request: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{""}}}, check: apierrors.IsInvalid},
		{name: "bound to a pod", request: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"}}}, check: apierrors.IsBadRequest, wantMsg: "only Secrets"},
		{name: "bound to a missing secret", request: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "missing"}}}, check: apierrors.IsNotFound},
		{name: "bound to a secret with another UID", request: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: secretRef("old")}}, check: apierrors.IsConflict},
		{name: "refused by admission", account: "denied", check: apierrors.IsForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.addServiceAccount("a", "default", "robot", "uid-1")
			e.addServiceAccount("a", "default", "denied", "uid-2")
			e.addSecret("a", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default", UID: "s-uid"}})
			ctx := requestContext(t.Context(), "a", "default")
			if tc.ctx != nil {
				ctx = tc.ctx(t.Context())
			}
			account := tc.account
			if account == "" {
				account = "robot"
			}
			admit := func(_ context.Context, obj runtime.Object) error {
				if obj.(*authenticationv1.TokenRequest).Name == "denied" {
					return apierrors.NewForbidden(authenticationv1.Resource("tokenrequests"), "denied", errors.New("no"))
				}
				return nil
			}
			_, err := e.tokens.Create(ctx, account, tc.request.DeepCopy(), admit, &metav1.CreateOptions{})
			if err == nil || !tc.check(err) {
				t.Fatalf("error %v is not what the test expects", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
		})
	}
}
