package v1alpha1

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

func TestLogicalClusterDeepCopy(t *testing.T) {
	f := randfill.NewWithSeed(1).NilChance(0).NumElements(1, 3)
	for i := range 20 {
		var in LogicalCluster
		f.Fill(&in)
		// Random bytes are not valid managed fields JSON.
		in.ManagedFields = nil
		if in.Spec.Owner == nil || len(in.Status.Conditions) == 0 || len(in.Spec.Initializers) == 0 {
			t.Fatalf("fill %d left fields empty: %+v", i, in)
		}
		before := mustJSON(t, &in)

		out := in.DeepCopy()
		if !reflect.DeepEqual(&in, out) {
			t.Fatalf("DeepCopy differs from the original:\n%+v\n%+v", in, *out)
		}
		obj := in.DeepCopyObject()
		if !reflect.DeepEqual(runtime.Object(&in), obj) {
			t.Fatalf("DeepCopyObject differs from the original")
		}

		// Changing every reference-typed field of the copy must leave the
		// original alone.
		out.Annotations["changed"] = "true"
		out.Spec.Owner.Name += "-changed"
		out.Spec.Initializers[0] += "-changed"
		out.Status.Initializers[0] += "-changed"
		out.Status.Conditions[0].Reason += "-changed"
		out.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Unix(1, 0))
		if after := mustJSON(t, &in); after != before {
			t.Fatalf("changing the copy changed the original:\nbefore %s\nafter  %s", before, after)
		}
	}

	var nilLC *LogicalCluster
	if nilLC.DeepCopy() != nil {
		t.Errorf("DeepCopy of nil is not nil")
	}
}

func TestShardDeepCopy(t *testing.T) {
	in := &Shard{
		ObjectMeta: metav1.ObjectMeta{Name: "alpha", Labels: map[string]string{ShardRegionLabelKey: "eu"}},
		Spec:       ShardSpec{BaseURL: "https://alpha:6443"},
		Status: ShardStatus{
			Capacity:   corev1.ResourceList{"logicalclusters": resource.MustParse("10k")},
			Conditions: conditionsv1alpha1.Conditions{{Type: conditionsv1alpha1.ReadyCondition, Status: corev1.ConditionTrue}},
		},
	}
	before := mustJSON(t, in)
	out := in.DeepCopyObject().(*Shard)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("DeepCopyObject differs from the original")
	}
	out.Labels[ShardRegionLabelKey] = "us"
	out.Status.Capacity["logicalclusters"] = resource.MustParse("1")
	out.Status.Conditions[0].Status = corev1.ConditionFalse
	if after := mustJSON(t, in); after != before {
		t.Fatalf("changing the copy changed the original:\nbefore %s\nafter  %s", before, after)
	}
}

// TestWireFormat pins the JSON field names to kcp's, so that kcp clients
// read our objects and we read theirs.
func TestWireFormat(t *testing.T) {
	ts := metav1.NewTime(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	tests := []struct {
		name string
		obj  runtime.Object
		want string
	}{
		{
			name: "LogicalCluster",
			obj: &LogicalCluster{
				TypeMeta: metav1.TypeMeta{APIVersion: "core.kcp.io/v1alpha1", Kind: "LogicalCluster"},
				ObjectMeta: metav1.ObjectMeta{
					Name:        LogicalClusterName,
					Annotations: map[string]string{LogicalClusterPathAnnotationKey: "root:org"},
				},
				Spec: LogicalClusterSpec{
					DirectlyDeletable: true,
					Owner: &LogicalClusterOwner{
						APIVersion: "tenancy.kcp.io/v1alpha1",
						Resource:   "workspaces",
						Name:       "org",
						Cluster:    "root",
						UID:        "1234",
					},
					Initializers: []LogicalClusterInitializer{"root:organization", "system:apibindings"},
				},
				Status: LogicalClusterStatus{
					URL:   "https://front-proxy/clusters/2x9z",
					Phase: LogicalClusterPhaseInitializing,
					Conditions: conditionsv1alpha1.Conditions{{
						Type:               WorkspaceInitialized,
						Status:             corev1.ConditionFalse,
						Severity:           conditionsv1alpha1.ConditionSeverityInfo,
						LastTransitionTime: ts,
						Reason:             WorkspaceInitializedInitializerExists,
						Message:            "initializers left",
					}},
					Initializers: []LogicalClusterInitializer{"system:apibindings"},
				},
			},
			want: `{
				"apiVersion": "core.kcp.io/v1alpha1",
				"kind": "LogicalCluster",
				"metadata": {"name": "cluster", "annotations": {"kcp.io/path": "root:org"}},
				"spec": {
					"directlyDeletable": true,
					"owner": {"apiVersion": "tenancy.kcp.io/v1alpha1", "resource": "workspaces", "name": "org", "cluster": "root", "uid": "1234"},
					"initializers": ["root:organization", "system:apibindings"]
				},
				"status": {
					"URL": "https://front-proxy/clusters/2x9z",
					"phase": "Initializing",
					"conditions": [{
						"type": "WorkspaceInitialized",
						"status": "False",
						"severity": "Info",
						"lastTransitionTime": "2024-05-06T07:08:09Z",
						"reason": "InitializerExists",
						"message": "initializers left"
					}],
					"initializers": ["system:apibindings"]
				}
			}`,
		},
		{
			name: "Shard",
			obj: &Shard{
				TypeMeta:   metav1.TypeMeta{APIVersion: "core.kcp.io/v1alpha1", Kind: "Shard"},
				ObjectMeta: metav1.ObjectMeta{Name: RootShard},
				Spec: ShardSpec{
					BaseURL:             "https://root:6443",
					ExternalURL:         "https://front-proxy:443",
					VirtualWorkspaceURL: "https://root:6444",
				},
				Status: ShardStatus{
					Capacity: corev1.ResourceList{"logicalclusters": resource.MustParse("1k")},
				},
			},
			want: `{
				"apiVersion": "core.kcp.io/v1alpha1",
				"kind": "Shard",
				"metadata": {"name": "root"},
				"spec": {"baseURL": "https://root:6443", "externalURL": "https://front-proxy:443", "virtualWorkspaceURL": "https://root:6444"},
				"status": {"capacity": {"logicalclusters": "1k"}}
			}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got, want any
			if err := json.Unmarshal([]byte(mustJSON(t, tc.obj)), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("JSON mismatch:\ngot  %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
			}

			// And back: the kcp document decodes to the same object.
			back := reflect.New(reflect.TypeOf(tc.obj).Elem()).Interface()
			if err := json.Unmarshal([]byte(tc.want), back); err != nil {
				t.Fatal(err)
			}
			if mustJSON(t, back) != mustJSON(t, tc.obj) {
				t.Errorf("decoding the kcp document lost data:\ngot  %s\nwant %s", mustJSON(t, back), mustJSON(t, tc.obj))
			}
		})
	}
}

func TestAddToScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for kind, obj := range map[string]runtime.Object{
		"LogicalCluster":     &LogicalCluster{},
		"LogicalClusterList": &LogicalClusterList{},
		"Shard":              &Shard{},
		"ShardList":          &ShardList{},
	} {
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		if want := SchemeGroupVersion.WithKind(kind); len(gvks) != 1 || gvks[0] != want {
			t.Errorf("%s: kinds %v, want %v", kind, gvks, want)
		}
	}
	if got, want := Resource("logicalclusters").String(), "logicalclusters.core.kcp.io"; got != want {
		t.Errorf("Resource = %q, want %q", got, want)
	}
	if got, want := Kind("Shard").String(), "Shard.core.kcp.io"; got != want {
		t.Errorf("Kind = %q, want %q", got, want)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
