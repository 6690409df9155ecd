// Package kcp is a typed client for the kcp API groups Tessera serves
// (core.kcp.io, tenancy.kcp.io, apis.kcp.io and topology.kcp.io), built on client-go's generic typed
// clients, so it behaves like a generated clientset.
package kcp

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
)

// Scheme holds the types of the kcp API groups this client knows.
var Scheme = runtime.NewScheme()

// Codecs are the codecs of Scheme.
var Codecs = serializer.NewCodecFactory(Scheme)

var parameterCodec = runtime.NewParameterCodec(Scheme)

func init() {
	for _, add := range []func(*runtime.Scheme) error{corev1alpha1.AddToScheme, tenancyv1alpha1.AddToScheme, apisv1alpha1.AddToScheme, topologyv1alpha1.AddToScheme} {
		if err := add(Scheme); err != nil {
			panic(err)
		}
	}
}

// The typed clients of each resource.
type (
	WorkspaceInterface      = *gentype.ClientWithList[*tenancyv1alpha1.Workspace, *tenancyv1alpha1.WorkspaceList]
	WorkspaceTypeInterface  = *gentype.ClientWithList[*tenancyv1alpha1.WorkspaceType, *tenancyv1alpha1.WorkspaceTypeList]
	LogicalClusterInterface = *gentype.ClientWithList[*corev1alpha1.LogicalCluster, *corev1alpha1.LogicalClusterList]
	ShardInterface          = *gentype.ClientWithList[*corev1alpha1.Shard, *corev1alpha1.ShardList]

	APIResourceSchemaInterface      = *gentype.ClientWithList[*apisv1alpha1.APIResourceSchema, *apisv1alpha1.APIResourceSchemaList]
	APIExportInterface              = *gentype.ClientWithList[*apisv1alpha1.APIExport, *apisv1alpha1.APIExportList]
	APIBindingInterface             = *gentype.ClientWithList[*apisv1alpha1.APIBinding, *apisv1alpha1.APIBindingList]
	APIExportEndpointSliceInterface = *gentype.ClientWithList[*apisv1alpha1.APIExportEndpointSlice, *apisv1alpha1.APIExportEndpointSliceList]

	PartitionInterface    = *gentype.ClientWithList[*topologyv1alpha1.Partition, *topologyv1alpha1.PartitionList]
	PartitionSetInterface = *gentype.ClientWithList[*topologyv1alpha1.PartitionSet, *topologyv1alpha1.PartitionSetList]
)

// Clientset reaches the kcp API groups of one endpoint: a logical cluster
// (/clusters/<name>) or, for wildcard list and watch, /clusters/*.
type Clientset struct {
	core     rest.Interface
	tenancy  rest.Interface
	apis     rest.Interface
	topology rest.Interface
}

// NewForConfig returns a Clientset for cfg.
func NewForConfig(cfg *rest.Config) (*Clientset, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return NewForConfigAndClient(cfg, httpClient)
}

// NewForConfigAndClient returns a Clientset for cfg that uses httpClient.
func NewForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*Clientset, error) {
	core, err := restClientFor(cfg, corev1alpha1.SchemeGroupVersion, httpClient)
	if err != nil {
		return nil, err
	}
	tenancy, err := restClientFor(cfg, tenancyv1alpha1.SchemeGroupVersion, httpClient)
	if err != nil {
		return nil, err
	}
	apis, err := restClientFor(cfg, apisv1alpha1.SchemeGroupVersion, httpClient)
	if err != nil {
		return nil, err
	}
	topology, err := restClientFor(cfg, topologyv1alpha1.SchemeGroupVersion, httpClient)
	if err != nil {
		return nil, err
	}
	return &Clientset{core: core, tenancy: tenancy, apis: apis, topology: topology}, nil
}

func restClientFor(cfg *rest.Config, gv schema.GroupVersion, httpClient *http.Client) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	c.NegotiatedSerializer = Codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building %s client: %w", gv, err)
	}
	return rc, nil
}

// Workspaces returns the client of tenancy.kcp.io/v1alpha1 workspaces.
func (c *Clientset) Workspaces() WorkspaceInterface {
	return gentype.NewClientWithList[*tenancyv1alpha1.Workspace, *tenancyv1alpha1.WorkspaceList]("workspaces", c.tenancy, parameterCodec, "",
		func() *tenancyv1alpha1.Workspace { return &tenancyv1alpha1.Workspace{} },
		func() *tenancyv1alpha1.WorkspaceList { return &tenancyv1alpha1.WorkspaceList{} })
}

// WorkspaceTypes returns the client of tenancy.kcp.io/v1alpha1 workspacetypes.
func (c *Clientset) WorkspaceTypes() WorkspaceTypeInterface {
	return gentype.NewClientWithList[*tenancyv1alpha1.WorkspaceType, *tenancyv1alpha1.WorkspaceTypeList]("workspacetypes", c.tenancy, parameterCodec, "",
		func() *tenancyv1alpha1.WorkspaceType { return &tenancyv1alpha1.WorkspaceType{} },
		func() *tenancyv1alpha1.WorkspaceTypeList { return &tenancyv1alpha1.WorkspaceTypeList{} })
}

// LogicalClusters returns the client of core.kcp.io/v1alpha1 logicalclusters.
func (c *Clientset) LogicalClusters() LogicalClusterInterface {
	return gentype.NewClientWithList[*corev1alpha1.LogicalCluster, *corev1alpha1.LogicalClusterList]("logicalclusters", c.core, parameterCodec, "",
		func() *corev1alpha1.LogicalCluster { return &corev1alpha1.LogicalCluster{} },
		func() *corev1alpha1.LogicalClusterList { return &corev1alpha1.LogicalClusterList{} })
}

// Shards returns the client of core.kcp.io/v1alpha1 shards.
func (c *Clientset) Shards() ShardInterface {
	return gentype.NewClientWithList[*corev1alpha1.Shard, *corev1alpha1.ShardList]("shards", c.core, parameterCodec, "",
		func() *corev1alpha1.Shard { return &corev1alpha1.Shard{} },
		func() *corev1alpha1.ShardList { return &corev1alpha1.ShardList{} })
}

// APIResourceSchemas returns the client of apis.kcp.io/v1alpha1
// apiresourceschemas.
func (c *Clientset) APIResourceSchemas() APIResourceSchemaInterface {
	return gentype.NewClientWithList[*apisv1alpha1.APIResourceSchema, *apisv1alpha1.APIResourceSchemaList]("apiresourceschemas", c.apis, parameterCodec, "",
		func() *apisv1alpha1.APIResourceSchema { return &apisv1alpha1.APIResourceSchema{} },
		func() *apisv1alpha1.APIResourceSchemaList { return &apisv1alpha1.APIResourceSchemaList{} })
}

// APIExports returns the client of apis.kcp.io/v1alpha1 apiexports.
func (c *Clientset) APIExports() APIExportInterface {
	return gentype.NewClientWithList[*apisv1alpha1.APIExport, *apisv1alpha1.APIExportList]("apiexports", c.apis, parameterCodec, "",
		func() *apisv1alpha1.APIExport { return &apisv1alpha1.APIExport{} },
		func() *apisv1alpha1.APIExportList { return &apisv1alpha1.APIExportList{} })
}

// APIBindings returns the client of apis.kcp.io/v1alpha1 apibindings.
func (c *Clientset) APIBindings() APIBindingInterface {
	return gentype.NewClientWithList[*apisv1alpha1.APIBinding, *apisv1alpha1.APIBindingList]("apibindings", c.apis, parameterCodec, "",
		func() *apisv1alpha1.APIBinding { return &apisv1alpha1.APIBinding{} },
		func() *apisv1alpha1.APIBindingList { return &apisv1alpha1.APIBindingList{} })
}

// APIExportEndpointSlices returns the client of apis.kcp.io/v1alpha1
// apiexportendpointslices.
func (c *Clientset) APIExportEndpointSlices() APIExportEndpointSliceInterface {
	return gentype.NewClientWithList[*apisv1alpha1.APIExportEndpointSlice, *apisv1alpha1.APIExportEndpointSliceList]("apiexportendpointslices", c.apis, parameterCodec, "",
		func() *apisv1alpha1.APIExportEndpointSlice { return &apisv1alpha1.APIExportEndpointSlice{} },
		func() *apisv1alpha1.APIExportEndpointSliceList { return &apisv1alpha1.APIExportEndpointSliceList{} })
}

// Partitions returns the client of topology.kcp.io/v1alpha1 partitions.
func (c *Clientset) Partitions() PartitionInterface {
	return gentype.NewClientWithList[*topologyv1alpha1.Partition, *topologyv1alpha1.PartitionList]("partitions", c.topology, parameterCodec, "",
		func() *topologyv1alpha1.Partition { return &topologyv1alpha1.Partition{} },
		func() *topologyv1alpha1.PartitionList { return &topologyv1alpha1.PartitionList{} })
}

// PartitionSets returns the client of topology.kcp.io/v1alpha1
// partitionsets.
func (c *Clientset) PartitionSets() PartitionSetInterface {
	return gentype.NewClientWithList[*topologyv1alpha1.PartitionSet, *topologyv1alpha1.PartitionSetList]("partitionsets", c.topology, parameterCodec, "",
		func() *topologyv1alpha1.PartitionSet { return &topologyv1alpha1.PartitionSet{} },
		func() *topologyv1alpha1.PartitionSetList { return &topologyv1alpha1.PartitionSetList{} })
}
