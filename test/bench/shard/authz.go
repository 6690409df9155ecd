package main

import (
	"context"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
)

const (
	benchUser      = "bench-user"
	benchUserToken = "bench-user-token"
)

// authorizationOverhead gives every cluster a RoleBinding, gives one
// cluster 100, binds the bench user there, and compares GET latency as the
// shard admin (system:masters, decided before RBAC) and as that user
// (workspace content access plus RBAC).
func authorizationOverhead(ctx context.Context, s *shard, n, samples, workers int) error {
	binding := func(name, user, role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		}
	}
	start := time.Now()
	if err := parallel(ctx, n, workers, func(ctx context.Context, i int) error {
		c, err := s.kube.For(clusterName(i))
		if err != nil {
			return err
		}
		_, err = c.RbacV1().RoleBindings("default").Create(ctx, binding("reader", fmt.Sprintf("user-%d", i), "view"), metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	target := clusterName(n / 2)
	admin, err := s.kube.For(target)
	if err != nil {
		return err
	}
	for i := 0; i < 99; i++ {
		if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, binding(fmt.Sprintf("other-%d", i), fmt.Sprintf("other-%d", i), "view"), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-access"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: benchUser}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kcp:workspace:access"},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, binding("bench-view", benchUser, "view"), metav1.CreateOptions{}); err != nil {
		return err
	}
	fmt.Printf("\nRoleBindings: %d across %d clusters (+100 in %s) created in %s\n", n, n, target, time.Since(start).Round(time.Millisecond))

	cfg, err := clusters.ConfigFor(rest.AnonymousClientConfig(s.cfg), target)
	if err != nil {
		return err
	}
	cfg.BearerToken = benchUserToken
	user, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// The user's bindings reach the shard's informers shortly after creation.
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err = user.CoreV1().ConfigMaps("default").Get(ctx, "cm-3", metav1.GetOptions{}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the bench user cannot read in %s: %w", target, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	measure := func(c kubernetes.Interface) ([]time.Duration, error) {
		var d []time.Duration
		for i := 0; i < samples+100; i++ {
			t := time.Now()
			if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "cm-3", metav1.GetOptions{}); err != nil {
				return nil, err
			}
			if i >= 100 {
				d = append(d, time.Since(t))
			}
		}
		return d, nil
	}
	asAdmin, err := measure(admin)
	if err != nil {
		return err
	}
	asUser, err := measure(user)
	if err != nil {
		return err
	}
	fmt.Printf("Authorization overhead, GET of a configmap in a cluster with 100 RoleBindings (shard: %d clusters with bindings):\n", n)
	fmt.Printf("  shard admin (system:masters)  p50 %-8s p99 %s\n", pct(asAdmin, 50), pct(asAdmin, 99))
	fmt.Printf("  RBAC-authorized user          p50 %-8s p99 %s\n", pct(asUser, 50), pct(asUser, 99))
	fmt.Printf("  ratio user/admin              p50 %.2f     p99 %.2f\n",
		float64(pct(asUser, 50))/float64(pct(asAdmin, 50)), float64(pct(asUser, 99))/float64(pct(asAdmin, 99)))
	return nil
}
