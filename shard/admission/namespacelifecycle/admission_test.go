package namespacelifecycle

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// world is the state the plugin's dependencies read, per logical cluster.
type world struct {
	cached   map[string]*corev1.Namespace // cluster|name
	live     map[string]*corev1.Namespace // cluster|name
	deleting map[logicalcluster.Name]bool
	liveErr  error
	gets     int
}

func ns(name string, phase corev1.NamespacePhase) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
}

func (w *world) deps() Dependencies {
	return Dependencies{
		GetNamespace: func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
			if n, ok := w.cached[string(cluster)+"|"+name]; ok {
				return n, nil
			}
			return nil, apierrors.NewNotFound(corev1.Resource("namespace"), name)
		},
		GetLiveNamespace: func(_ context.Context, cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
			w.gets++
			if w.liveErr != nil {
				return nil, w.liveErr
			}
			if n, ok := w.live[string(cluster)+"|"+name]; ok {
				return n, nil
			}
			return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
		},
		ClusterDeleting: func(cluster logicalcluster.Name) (bool, error) {
			if cluster == "broken" {
				return false, errors.New("boom")
			}
			return w.deleting[cluster], nil
		},
	}
}

func configMapCreate(namespace string) admission.Attributes {
	return admission.NewAttributesRecord(&corev1.ConfigMap{}, nil, corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		namespace, "cm", corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
}

func attributes(kind schema.GroupVersionKind, resource schema.GroupVersionResource, namespace, name, subresource string, op admission.Operation) admission.Attributes {
	var obj runtime.Object
	if op == admission.Create {
		obj = &corev1.Namespace{}
	}
	return admission.NewAttributesRecord(obj, nil, kind, namespace, name, resource, subresource, op, nil, false, &user.DefaultInfo{Name: "alice"})
}

var (
	nsKind     = corev1.SchemeGroupVersion.WithKind("Namespace")
	nsResource = corev1.SchemeGroupVersion.WithResource("namespaces")
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cluster   logicalcluster.Name
		noCluster bool
		world     world
		attrs     admission.Attributes
		// wantCode is the HTTP code of the error, 0 for none.
		wantCode int
		wantMsg  string
		wantGets int
	}{
		{
			name:    "create in an active namespace of the cluster",
			cluster: "a",
			world:   world{cached: map[string]*corev1.Namespace{"a|ns": ns("ns", corev1.NamespaceActive)}},
			attrs:   configMapCreate("ns"),
		},
		{
			name:     "create in a namespace that exists only in another cluster",
			cluster:  "a",
			world:    world{cached: map[string]*corev1.Namespace{"b|ns": ns("ns", corev1.NamespaceActive)}, live: map[string]*corev1.Namespace{"b|ns": ns("ns", corev1.NamespaceActive)}},
			attrs:    configMapCreate("ns"),
			wantCode: http.StatusNotFound,
			wantMsg:  `namespaces "ns" not found`,
			wantGets: 1,
		},
		{
			name:     "cache miss found by the live lookup",
			cluster:  "a",
			world:    world{live: map[string]*corev1.Namespace{"a|ns": ns("ns", corev1.NamespaceActive)}},
			attrs:    configMapCreate("ns"),
			wantGets: 1,
		},
		{
			name:     "live lookup failure",
			cluster:  "a",
			world:    world{liveErr: errors.New("connection refused")},
			attrs:    configMapCreate("ns"),
			wantCode: http.StatusInternalServerError,
			wantGets: 1,
		},
		{
			name:     "create in a terminating namespace",
			cluster:  "a",
			world:    world{cached: map[string]*corev1.Namespace{"a|ns": ns("ns", corev1.NamespaceTerminating)}},
			attrs:    configMapCreate("ns"),
			wantCode: http.StatusForbidden,
			wantMsg:  "unable to create new content in namespace ns because it is being terminated",
		},
		{
			name:    "create of a cluster-scoped object",
			cluster: "a",
			attrs: attributes(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
				schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "", "r", "", admission.Create),
		},
		{
			name:    "create of a namespace",
			cluster: "a",
			attrs:   attributes(nsKind, nsResource, "", "ns", "", admission.Create),
		},
		{
			name:    "update in a missing namespace",
			cluster: "a",
			attrs: admission.NewAttributesRecord(&corev1.ConfigMap{}, &corev1.ConfigMap{}, corev1.SchemeGroupVersion.WithKind("ConfigMap"),
				"gone", "cm", corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Update, nil, false, &user.DefaultInfo{}),
		},
		{
			name:    "delete in a missing namespace",
			cluster: "a",
			attrs: attributes(corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithResource("configmaps"),
				"gone", "cm", "", admission.Delete),
		},
		{
			name:    "local subject access review in a missing namespace",
			cluster: "a",
			attrs: attributes(schema.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "LocalSubjectAccessReview"},
				schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews"}, "gone", "", "", admission.Create),
		},
		{
			name:     "delete of the default namespace",
			cluster:  "a",
			attrs:    attributes(nsKind, nsResource, "", "default", "", admission.Delete),
			wantCode: http.StatusForbidden,
			wantMsg:  "this namespace may not be deleted",
		},
		{
			name:     "delete of kube-system when the cluster state is unknown",
			cluster:  "broken",
			attrs:    attributes(nsKind, nsResource, "", "kube-system", "", admission.Delete),
			wantCode: http.StatusForbidden,
		},
		{
			name:    "delete of the default namespace of a cluster being deleted",
			cluster: "a",
			world:   world{deleting: map[logicalcluster.Name]bool{"a": true}},
			attrs:   attributes(nsKind, nsResource, "", "default", "", admission.Delete),
		},
		{
			name:    "delete of another namespace",
			cluster: "a",
			attrs:   attributes(nsKind, nsResource, "", "team", "", admission.Delete),
		},
		{
			name:      "create without a logical cluster",
			noCluster: true,
			attrs:     configMapCreate("ns"),
			wantCode:  http.StatusInternalServerError,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.world
			p := New(w.deps())
			if err := p.ValidateInitialization(); err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if !tc.noCluster {
				ctx = logicalcluster.WithName(ctx, tc.cluster)
			}
			err := p.Validate(ctx, tc.attrs, nil)
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want admitted", err)
				}
			} else {
				var status apierrors.APIStatus
				if !errors.As(err, &status) {
					t.Fatalf("Validate() = %v, want an API status with code %d", err, tc.wantCode)
				}
				if got := int(status.Status().Code); got != tc.wantCode {
					t.Errorf("code = %d, want %d (%v)", got, tc.wantCode, err)
				}
				if !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("error = %q, want it to contain %q", err, tc.wantMsg)
				}
			}
			if w.gets != tc.wantGets {
				t.Errorf("live lookups = %d, want %d", w.gets, tc.wantGets)
			}
		})
	}
}

func TestTerminatingCause(t *testing.T) {
	w := world{cached: map[string]*corev1.Namespace{"a|ns": ns("ns", corev1.NamespaceTerminating)}}
	err := New(w.deps()).Validate(logicalcluster.WithName(t.Context(), "a"), configMapCreate("ns"), nil)
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Details == nil {
		t.Fatalf("Validate() = %v, want a status with details", err)
	}
	found := false
	for _, c := range status.ErrStatus.Details.Causes {
		found = found || c.Type == corev1.NamespaceTerminatingCause
	}
	if !found {
		t.Errorf("causes = %v, want %s", status.ErrStatus.Details.Causes, corev1.NamespaceTerminatingCause)
	}
}

// TestLiveLookupAfterDelete checks that creates in a namespace whose
// deletion was just admitted are checked against the API server while the
// cache still shows the namespace active, in that cluster only, and only for
// a while.
func TestLiveLookupAfterDelete(t *testing.T) {
	w := &world{
		cached: map[string]*corev1.Namespace{"a|ns": ns("ns", corev1.NamespaceActive), "b|ns": ns("ns", corev1.NamespaceActive)},
		live:   map[string]*corev1.Namespace{"a|ns": ns("ns", corev1.NamespaceTerminating), "b|ns": ns("ns", corev1.NamespaceActive)},
	}
	clock := testingclock.NewFakeClock(time.Now())
	p := newWithClock(w.deps(), clock)
	a := logicalcluster.WithName(t.Context(), "a")
	b := logicalcluster.WithName(t.Context(), "b")

	if err := p.Validate(a, configMapCreate("ns"), nil); err != nil {
		t.Fatalf("create before the delete: %v", err)
	}
	if err := p.Validate(a, attributes(nsKind, nsResource, "", "ns", "", admission.Delete), nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := p.Validate(a, configMapCreate("ns"), nil); !apierrors.IsForbidden(err) {
		t.Errorf("create after the delete = %v, want Forbidden from the live lookup", err)
	}
	if err := p.Validate(b, configMapCreate("ns"), nil); err != nil {
		t.Errorf("create in the other cluster = %v, want admitted", err)
	}
	if w.gets != 1 {
		t.Errorf("live lookups = %d, want 1", w.gets)
	}
	clock.Step(liveLookupTTL + time.Second)
	if err := p.Validate(a, configMapCreate("ns"), nil); err != nil {
		t.Errorf("create long after the delete = %v, want admitted from the cache", err)
	}
}

func TestValidateInitialization(t *testing.T) {
	if err := New(Dependencies{}).ValidateInitialization(); err == nil {
		t.Error("ValidateInitialization() succeeded without dependencies")
	}
}

func TestNotReady(t *testing.T) {
	if testing.Short() {
		t.Skip("waits the 10s readiness timeout of admission.Handler")
	}
	w := world{}
	deps := w.deps()
	deps.Ready = func() bool { return false }
	p := New(deps)
	if err := p.Validate(logicalcluster.WithName(t.Context(), "a"), configMapCreate("ns"), nil); !apierrors.IsForbidden(err) {
		t.Errorf("Validate() = %v, want Forbidden while not ready", err)
	}
}
