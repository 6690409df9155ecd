package informers

import (
	"fmt"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// Workspaces returns the informer of tenancy.kcp.io/v1alpha1 workspaces.
func (f *SharedInformerFactory) Workspaces() Informer[*tenancyv1alpha1.Workspace] {
	return typedInformer(f, tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaces"), tenancyv1alpha1.Resource("workspace"), &tenancyv1alpha1.Workspace{},
		func() listWatcher[*tenancyv1alpha1.WorkspaceList] { return f.kcp("workspaces").Workspaces() })
}

// WorkspaceTypes returns the informer of tenancy.kcp.io/v1alpha1
// workspacetypes.
func (f *SharedInformerFactory) WorkspaceTypes() Informer[*tenancyv1alpha1.WorkspaceType] {
	return typedInformer(f, tenancyv1alpha1.SchemeGroupVersion.WithResource("workspacetypes"), tenancyv1alpha1.Resource("workspacetype"), &tenancyv1alpha1.WorkspaceType{},
		func() listWatcher[*tenancyv1alpha1.WorkspaceTypeList] {
			return f.kcp("workspacetypes").WorkspaceTypes()
		})
}

// Shards returns the informer of core.kcp.io/v1alpha1 shards.
func (f *SharedInformerFactory) Shards() Informer[*corev1alpha1.Shard] {
	return typedInformer(f, corev1alpha1.SchemeGroupVersion.WithResource("shards"), corev1alpha1.Resource("shard"), &corev1alpha1.Shard{},
		func() listWatcher[*corev1alpha1.ShardList] { return f.kcp("shards").Shards() })
}

func (f *SharedInformerFactory) kcp(resource string) *kcpclient.Clientset {
	if f.clients.KCP == nil {
		panic(fmt.Sprintf("informers: Clients.KCP is required for %s", resource))
	}
	return f.clients.KCP
}
