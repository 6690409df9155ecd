package clusterroleaggregation

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func clusterRole(name string, lbls map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Rules: rules}
}

func aggregated(name string, selectors ...map[string]string) *rbacv1.ClusterRole {
	r := clusterRole(name, nil)
	r.AggregationRule = &rbacv1.AggregationRule{}
	for _, s := range selectors {
		r.AggregationRule.ClusterRoleSelectors = append(r.AggregationRule.ClusterRoleSelectors, metav1.LabelSelector{MatchLabels: s})
	}
	return r
}

var (
	readPods    = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	readSecrets = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}
	readHealth  = rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}
	toView      = map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}
	toEdit      = map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}
)

func TestReconcile(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cluster   map[string]*rbacv1.ClusterRole
		key       string
		wantApply []rbacv1.PolicyRule
		applied   bool
		wantErr   bool
		terminal  bool
	}{
		{
			name: "aggregates selected roles by name, without duplicates",
			cluster: map[string]*rbacv1.ClusterRole{
				"view": aggregated("view", toView),
				"b":    clusterRole("b", toView, readSecrets, readPods),
				"a":    clusterRole("a", toView, readPods),
				"c":    clusterRole("c", nil, readHealth),
			},
			key: "view", wantApply: []rbacv1.PolicyRule{readPods, readSecrets}, applied: true,
		},
		{
			name: "several selectors in order",
			cluster: map[string]*rbacv1.ClusterRole{
				"edit": aggregated("edit", toEdit, toView),
				"v":    clusterRole("v", toView, readPods),
				"e":    clusterRole("e", toEdit, readHealth),
			},
			key: "edit", wantApply: []rbacv1.PolicyRule{readHealth, readPods}, applied: true,
		},
		{
			name: "a role that selects itself does not aggregate itself",
			cluster: map[string]*rbacv1.ClusterRole{
				"view": func() *rbacv1.ClusterRole {
					r := aggregated("view", toView)
					r.Labels = toView
					r.Rules = []rbacv1.PolicyRule{readHealth}
					return r
				}(),
				"a": clusterRole("a", toView, readPods),
			},
			key: "view", wantApply: []rbacv1.PolicyRule{readPods}, applied: true,
		},
		{
			name: "nothing selected: no rules",
			cluster: map[string]*rbacv1.ClusterRole{
				"view": func() *rbacv1.ClusterRole {
					r := aggregated("view", toView)
					r.Rules = []rbacv1.PolicyRule{readPods}
					return r
				}(),
			},
			key: "view", wantApply: []rbacv1.PolicyRule{}, applied: true,
		},
		{
			name: "up to date",
			cluster: map[string]*rbacv1.ClusterRole{
				"view": func() *rbacv1.ClusterRole {
					r := aggregated("view", toView)
					r.Rules = []rbacv1.PolicyRule{readPods}
					return r
				}(),
				"a": clusterRole("a", toView, readPods),
			},
			key: "view",
		},
		{
			name: "empty and unset rules are equal",
			cluster: map[string]*rbacv1.ClusterRole{
				"view": aggregated("view", toView),
			},
			key: "view",
		},
		{name: "not aggregated", cluster: map[string]*rbacv1.ClusterRole{"a": clusterRole("a", toView, readPods)}, key: "a"},
		{name: "gone", cluster: map[string]*rbacv1.ClusterRole{}, key: "view"},
		{
			name: "invalid selector is terminal",
			cluster: map[string]*rbacv1.ClusterRole{
				"view": func() *rbacv1.ClusterRole {
					r := aggregated("view")
					r.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}}
					return r
				}(),
			},
			key: "view", wantErr: true, terminal: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var applied []rbacv1.PolicyRule
			didApply := false
			d := deps{
				get: func(cluster logicalcluster.Name, name string) (*rbacv1.ClusterRole, bool, error) {
					if cluster != "c1" {
						t.Errorf("read cluster %s", cluster)
					}
					r, ok := tc.cluster[name]
					return r, ok, nil
				},
				list: func(cluster logicalcluster.Name, selector labels.Selector) ([]*rbacv1.ClusterRole, error) {
					var out []*rbacv1.ClusterRole
					for _, r := range tc.cluster {
						if selector.Matches(labels.Set(r.Labels)) {
							out = append(out, r)
						}
					}
					return out, nil
				},
				apply: func(_ context.Context, cluster logicalcluster.Name, name string, rules []rbacv1.PolicyRule) error {
					didApply, applied = true, rules
					return nil
				},
			}
			_, err := reconcile(t.Context(), reconciler.Key{Cluster: "c1", Name: tc.key}, d)
			if (err != nil) != tc.wantErr || reconciler.IsTerminal(err) != tc.terminal {
				t.Fatalf("err = %v", err)
			}
			if didApply != tc.applied {
				t.Fatalf("applied = %v, want %v", didApply, tc.applied)
			}
			if diff := cmp.Diff(tc.wantApply, applied); tc.applied && diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("apply errors are retried", func(t *testing.T) {
		d := deps{
			get: func(logicalcluster.Name, string) (*rbacv1.ClusterRole, bool, error) {
				return aggregated("view", toView), true, nil
			},
			list: func(logicalcluster.Name, labels.Selector) ([]*rbacv1.ClusterRole, error) {
				return []*rbacv1.ClusterRole{clusterRole("a", toView, readPods)}, nil
			},
			apply: func(context.Context, logicalcluster.Name, string, []rbacv1.PolicyRule) error {
				return errors.New("conflict")
			},
		}
		_, err := reconcile(t.Context(), reconciler.Key{Cluster: "c1", Name: "view"}, d)
		if err == nil || reconciler.IsTerminal(err) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestAggregatingIndex(t *testing.T) {
	r := aggregated("view", toView)
	r.Annotations = map[string]string{logicalcluster.AnnotationKey: "a"}
	if got, _ := aggregatingIndexFunc(r); !cmp.Equal(got, []string{"a"}) {
		t.Errorf("aggregated role indexed under %v", got)
	}
	if got, _ := aggregatingIndexFunc(clusterRole("x", nil)); got != nil {
		t.Errorf("plain role indexed under %v", got)
	}
}
