package server

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ensureLogicalClusters creates the LogicalCluster objects of the clusters
// every shard starts with, through the loopback client.
func ensureLogicalClusters(ctx context.Context, loopback *rest.Config, names []logicalcluster.Name) error {
	logger := klog.FromContext(ctx)
	gvr := corev1alpha1.SchemeGroupVersion.WithResource("logicalclusters")
	for _, name := range names {
		cfg := rest.CopyConfig(loopback)
		cfg.Host += "/clusters/" + string(name)
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		lc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": corev1alpha1.SchemeGroupVersion.String(),
			"kind":       "LogicalCluster",
			"metadata": map[string]any{
				"name":        corev1alpha1.LogicalClusterName,
				"annotations": map[string]any{logicalcluster.PathAnnotationKey: string(name)},
			},
		}}
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := client.Resource(gvr).Create(ctx, lc, metav1.CreateOptions{})
			switch {
			case err == nil:
				logger.Info("Created logical cluster", "cluster", name)
				return true, nil
			case apierrors.IsAlreadyExists(err):
				return true, nil
			default:
				logger.V(2).Info("Retrying creation of logical cluster", "cluster", name, "err", err)
				return false, nil
			}
		})
		if err != nil {
			return fmt.Errorf("creating logical cluster %s: %w", name, err)
		}
	}
	return nil
}
