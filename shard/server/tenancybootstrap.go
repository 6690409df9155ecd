package server

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// rootType refers to a WorkspaceType of the root logical cluster.
func rootType(name tenancyv1alpha1.WorkspaceTypeName) tenancyv1alpha1.WorkspaceTypeReference {
	return tenancyv1alpha1.WorkspaceTypeReference{Name: name, Path: "root"}
}

func onlyTypes(names ...tenancyv1alpha1.WorkspaceTypeName) *tenancyv1alpha1.WorkspaceTypeSelector {
	s := &tenancyv1alpha1.WorkspaceTypeSelector{}
	for _, n := range names {
		s.Types = append(s.Types, rootType(n))
	}
	return s
}

func ref(r tenancyv1alpha1.WorkspaceTypeReference) *tenancyv1alpha1.WorkspaceTypeReference { return &r }

// BootstrapWorkspaceTypes are the WorkspaceTypes of the root logical
// cluster, as the seed describes them: root holds organizations (and the
// home root), organizations hold teams and universal workspaces, universal
// workspaces (and the types extending universal) get a default namespace
// through the root:universal initializer, and home workspaces sit below
// root:users in homebucket workspaces.
func BootstrapWorkspaceTypes() []tenancyv1alpha1.WorkspaceType {
	const (
		root, org, team, universal = tenancyv1alpha1.RootWorkspaceTypeName, tenancyv1alpha1.OrganizationWorkspaceTypeName, tenancyv1alpha1.TeamWorkspaceTypeName, tenancyv1alpha1.UniversalWorkspaceTypeName
		home, homeRoot, homeBucket = tenancyv1alpha1.HomeWorkspaceTypeName, tenancyv1alpha1.HomeRootWorkspaceTypeName, tenancyv1alpha1.HomeBucketWorkspaceTypeName
	)
	extendsUniversal := tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{rootType(universal)}}
	// Home roots and buckets hold Workspaces only.
	tenancyBinding := []tenancyv1alpha1.APIExportReference{{Path: "root", Export: "tenancy.kcp.io"}}
	wt := func(name tenancyv1alpha1.WorkspaceTypeName, spec tenancyv1alpha1.WorkspaceTypeSpec) tenancyv1alpha1.WorkspaceType {
		return tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: string(name)}, Spec: spec}
	}
	return []tenancyv1alpha1.WorkspaceType{
		wt(root, tenancyv1alpha1.WorkspaceTypeSpec{
			DefaultChildWorkspaceType: ref(rootType(org)),
			LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{None: true},
		}),
		wt(org, tenancyv1alpha1.WorkspaceTypeSpec{
			Extend:                    extendsUniversal,
			DefaultChildWorkspaceType: ref(rootType(universal)),
			LimitAllowedParents:       onlyTypes(root),
		}),
		wt(team, tenancyv1alpha1.WorkspaceTypeSpec{
			Extend:                    extendsUniversal,
			DefaultChildWorkspaceType: ref(rootType(universal)),
			LimitAllowedParents:       onlyTypes(org, team),
		}),
		wt(universal, tenancyv1alpha1.WorkspaceTypeSpec{
			Initializer:               true,
			DefaultChildWorkspaceType: ref(rootType(universal)),
			// kcp's own APIs, bound as kcp binds them: Workspaces and
			// WorkspaceTypes, Partitions and PartitionSets.
			DefaultAPIBindings: []tenancyv1alpha1.APIExportReference{
				{Path: "root", Export: "tenancy.kcp.io"},
				{Path: "root", Export: "topology.kcp.io"},
			},
		}),
		wt(homeRoot, tenancyv1alpha1.WorkspaceTypeSpec{
			DefaultAPIBindings:        tenancyBinding,
			DefaultChildWorkspaceType: ref(rootType(homeBucket)),
			LimitAllowedParents:       onlyTypes(root),
			LimitAllowedChildren:      onlyTypes(homeBucket),
		}),
		wt(homeBucket, tenancyv1alpha1.WorkspaceTypeSpec{
			DefaultAPIBindings:        tenancyBinding,
			DefaultChildWorkspaceType: ref(rootType(homeBucket)),
			LimitAllowedParents:       onlyTypes(homeRoot, homeBucket),
			LimitAllowedChildren:      onlyTypes(homeBucket, home),
		}),
		wt(home, tenancyv1alpha1.WorkspaceTypeSpec{
			Extend:                    extendsUniversal,
			DefaultChildWorkspaceType: ref(rootType(universal)),
			LimitAllowedParents:       onlyTypes(homeBucket),
		}),
	}
}

// ensureWorkspaceTypes creates the bootstrap WorkspaceTypes in root and
// brings back the spec of those that drifted.
func ensureWorkspaceTypes(ctx context.Context, root *kcpclient.Clientset) error {
	for _, desired := range BootstrapWorkspaceTypes() {
		err := retryBootstrap(ctx, func() error {
			existing, err := root.WorkspaceTypes().Get(ctx, desired.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = root.WorkspaceTypes().Create(ctx, &desired, metav1.CreateOptions{})
				return err
			case err != nil:
				return err
			case equality.Semantic.DeepEqual(existing.Spec, desired.Spec):
				return nil
			}
			existing.Spec = desired.Spec
			_, err = root.WorkspaceTypes().Update(ctx, existing, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("ensuring WorkspaceType root:%s: %w", desired.Name, err)
		}
	}
	return nil
}

// ensureShard registers this shard as a Shard object in root, keeping its
// URLs up to date.
func ensureShard(ctx context.Context, root *kcpclient.Clientset, desired *corev1alpha1.Shard) error {
	err := retryBootstrap(ctx, func() error {
		_, err := applyShard(ctx, root.Shards(), desired)
		return err
	})
	if err != nil {
		return fmt.Errorf("registering shard %s: %w", desired.Name, err)
	}
	return nil
}

// hasLabels tells whether labels has every label of want.
func hasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// retryBootstrap retries f for a minute: right after start the informers
// admission reads may still be syncing.
func retryBootstrap(ctx context.Context, f func() error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = f()
		if last != nil {
			klog.FromContext(ctx).V(2).Info("Retrying bootstrap step", "err", last)
		}
		return last == nil, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

// bootstrapTenancy publishes kcp's own APIs from root, creates the root
// WorkspaceTypes and registers the shard in root.
func (s *Server) bootstrapTenancy(ctx context.Context, loopback *rest.Config) error {
	if err := s.ensureCoreExports(ctx, loopback); err != nil {
		return err
	}
	root := s.kcpClients.Cluster(logicalcluster.Root)
	if err := ensureWorkspaceTypes(ctx, root); err != nil {
		return err
	}
	if err := ensureShard(ctx, root, s.shardObject()); err != nil {
		return err
	}
	go s.runComputeExports(ctx, loopback)
	return nil
}
