package replicated

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestKeys(t *testing.T) {
	prefix := "/apis.kcp.io/apiexports"
	gr := schema.GroupResource{Group: "apis.kcp.io", Resource: "apiexports"}
	for _, tc := range []struct {
		scope          Scope
		wantRoot       string
		wantKey        string
		wantMethodNotA bool
	}{
		{Scope{"a", "x"}, prefix + "/a/x", prefix + "/a/x/e", false},
		{Scope{"a", "root:org"}, prefix + "/a/root:org", prefix + "/a/root:org/e", false},
		{Scope{"a", "*"}, prefix + "/a", "", true},
		{Scope{"*", "x"}, prefix, "", true},
		{Scope{"*", "*"}, prefix, "", true},
	} {
		t.Run(tc.scope.String(), func(t *testing.T) {
			ctx := WithScope(context.Background(), tc.scope)
			if got := keyRoot(ctx, prefix); got != tc.wantRoot {
				t.Errorf("root: got %q, want %q", got, tc.wantRoot)
			}
			got, err := key(ctx, prefix, gr, "e")
			if tc.wantMethodNotA {
				if apierrors.ReasonForError(err) != "MethodNotAllowed" {
					t.Errorf("key: want MethodNotAllowed, got %q, %v", got, err)
				}
				return
			}
			if err != nil || got != tc.wantKey {
				t.Errorf("key: got %q, %v, want %q", got, err, tc.wantKey)
			}
		})
	}
	if _, err := key(WithScope(context.Background(), Scope{"a", "x"}), prefix, gr, "a/b"); !apierrors.IsBadRequest(err) {
		t.Errorf("name with a slash: want BadRequest, got %v", err)
	}
	if got := keyRoot(context.Background(), prefix); got != prefix+"/-" {
		t.Errorf("no scope: got root %q", got)
	}
}

func TestScopedOptions(t *testing.T) {
	name := fields.OneTermEqualSelector("metadata.name", "e")
	for _, tc := range []struct {
		scope   Scope
		options *metainternalversion.ListOptions
		want    string
	}{
		{Scope{"a", "x"}, nil, ""},
		{Scope{"a", "*"}, &metainternalversion.ListOptions{FieldSelector: name}, "metadata.name=e"},
		{Scope{"*", "*"}, nil, ""},
		{Scope{"*", "x"}, nil, clusterField + "=x"},
		{Scope{"*", "x"}, &metainternalversion.ListOptions{FieldSelector: name}, "metadata.name=e," + clusterField + "=x"},
	} {
		got := scopedOptions(WithScope(context.Background(), tc.scope), tc.options)
		s := ""
		if got != nil && got.FieldSelector != nil {
			s = got.FieldSelector.String()
		}
		if s != tc.want {
			t.Errorf("%v: got field selector %q, want %q", tc.scope, s, tc.want)
		}
	}
}

func TestAttrs(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetName("e")
	u.SetLabels(map[string]string{"l": "v"})
	u.SetAnnotations(map[string]string{"kcp.io/cluster": "x"})
	labels, f, err := attrs(u)
	if err != nil {
		t.Fatal(err)
	}
	if labels["l"] != "v" || f["metadata.name"] != "e" || f[clusterField] != "x" {
		t.Errorf("got labels %v, fields %v", labels, f)
	}
}
