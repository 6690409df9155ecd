package finalizer

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// listPageSize is the number of instances listed per request.
const listPageSize = 500

// listInstancesFunc returns a function that lists the instances of a
// resource in all namespaces of a logical cluster with client, page by page.
func listInstancesFunc(client *clusters.DynamicClusterClient) func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource) (instances, error) {
	return func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource) (instances, error) {
		c, err := client.For(cluster)
		if err != nil {
			return instances{}, err
		}
		var count int
		namespaces := sets.New[string]()
		opts := metav1.ListOptions{Limit: listPageSize}
		for {
			list, err := c.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, opts)
			if err != nil {
				return instances{}, fmt.Errorf("listing %s: %w", gvr, err)
			}
			count += len(list.Items)
			for i := range list.Items {
				if ns := list.Items[i].GetNamespace(); ns != "" {
					namespaces.Insert(ns)
				}
			}
			if list.GetContinue() == "" {
				break
			}
			opts.Continue = list.GetContinue()
		}
		ns := namespaces.UnsortedList()
		slices.Sort(ns)
		return instances{count: count, namespaces: ns}, nil
	}
}

// deleteInstancesFunc returns a function that deletes the instances of a
// resource in one namespace of a logical cluster (all of them for namespace
// "") with one DELETE collection request.
func deleteInstancesFunc(client *clusters.DynamicClusterClient) func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) error {
	return func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) error {
		c, err := client.For(cluster)
		if err != nil {
			return err
		}
		if err := c.Resource(gvr).Namespace(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			if namespace != "" {
				return fmt.Errorf("deleting %s in namespace %s: %w", gvr, namespace, err)
			}
			return fmt.Errorf("deleting %s: %w", gvr, err)
		}
		return nil
	}
}
