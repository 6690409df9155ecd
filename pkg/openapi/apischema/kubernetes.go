package apischema

import (
	"maps"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/tessera-dev/tessera/pkg/openapi/workloads"
)

// workloadDefinitions are package openapi's definitions with those of the
// workload APIs (package workloads), built when first needed.
var workloadDefinitions = sync.OnceValue(func() map[string]common.OpenAPIDefinition {
	out := maps.Clone(definitions())
	// Their references to types of other packages name Go packages
	// (k8s.io/api/core/v1.PodSpec), which the others' definitions know by
	// their model names (io.k8s.api.core.v1.PodSpec).
	maps.Copy(out, workloads.GetOpenAPIDefinitions(func(name string) spec.Ref {
		if strings.Contains(name, "/") {
			name = util.ToRESTFriendlyName(name)
		}
		return spec.MustCreateRef(name)
	}))
	return out
})

// Kubernetes are the workload resources of a compute service's APIExport
// "kubernetes", as kcp's root:compute offered them: Deployments, Services,
// Ingresses, Pods and Endpoints, with the schemas of the Kubernetes API
// types Tessera is built with and kubectl's printer columns. ConfigMaps and
// Secrets need none: every workspace serves them.
func Kubernetes() []Resource {
	resources := kubernetesResources()
	for i := range resources {
		resources[i].definitions = workloadDefinitions
	}
	return resources
}

func kubernetesResources() []Resource {
	age := apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}
	return []Resource{
		{
			Model: appsv1.Deployment{}.OpenAPIModelName(), Group: "apps", Version: "v1",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "deployments", Singular: "deployment", Kind: "Deployment", ShortNames: []string{"deploy"}, Categories: []string{"all"}},
			Scope: apiextensionsv1.NamespaceScoped, Status: true,
			// kubectl scale; Deployment's status has no selector string.
			Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Ready", Type: "string", JSONPath: ".status.readyReplicas", Description: "Ready replicas"},
				{Name: "Up-to-date", Type: "integer", JSONPath: ".status.updatedReplicas"},
				{Name: "Available", Type: "integer", JSONPath: ".status.availableReplicas"},
				age,
			},
		},
		{
			Model: corev1.Service{}.OpenAPIModelName(), Group: "", Version: "v1",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "services", Singular: "service", Kind: "Service", ShortNames: []string{"svc"}, Categories: []string{"all"}},
			Scope: apiextensionsv1.NamespaceScoped, Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Type", Type: "string", JSONPath: ".spec.type"},
				{Name: "Cluster-IP", Type: "string", JSONPath: ".spec.clusterIP"},
				{Name: "Ports", Type: "string", JSONPath: ".spec.ports[*].port"},
				age,
			},
		},
		{
			Model: networkingv1.Ingress{}.OpenAPIModelName(), Group: "networking.k8s.io", Version: "v1",
			// The Kubernetes project's own API, approved where it was made.
			Annotations: map[string]string{"api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/tree/master/keps/sig-network/1453-ingress-api"},
			Names:       apiextensionsv1.CustomResourceDefinitionNames{Plural: "ingresses", Singular: "ingress", Kind: "Ingress", ShortNames: []string{"ing"}},
			Scope:       apiextensionsv1.NamespaceScoped, Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Class", Type: "string", JSONPath: ".spec.ingressClassName"},
				{Name: "Hosts", Type: "string", JSONPath: ".spec.rules[*].host"},
				age,
			},
		},
		{
			Model: corev1.Pod{}.OpenAPIModelName(), Group: "", Version: "v1",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "pods", Singular: "pod", Kind: "Pod", ShortNames: []string{"po"}, Categories: []string{"all"}},
			Scope: apiextensionsv1.NamespaceScoped, Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Status", Type: "string", JSONPath: ".status.phase"},
				{Name: "Node", Type: "string", JSONPath: ".spec.nodeName", Priority: 1},
				age,
			},
		},
		{
			// Claims go down to the physical cluster, whose volumes come
			// back up (the syncer's upsync).
			Model: corev1.PersistentVolumeClaim{}.OpenAPIModelName(), Group: "", Version: "v1",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "persistentvolumeclaims", Singular: "persistentvolumeclaim", Kind: "PersistentVolumeClaim", ShortNames: []string{"pvc"}},
			Scope: apiextensionsv1.NamespaceScoped, Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Status", Type: "string", JSONPath: ".status.phase"},
				{Name: "Volume", Type: "string", JSONPath: ".spec.volumeName"},
				{Name: "Capacity", Type: "string", JSONPath: ".status.capacity.storage"},
				{Name: "StorageClass", Type: "string", JSONPath: ".spec.storageClassName"},
				age,
			},
		},
		{
			Model: corev1.PersistentVolume{}.OpenAPIModelName(), Group: "", Version: "v1",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "persistentvolumes", Singular: "persistentvolume", Kind: "PersistentVolume", ShortNames: []string{"pv"}},
			Scope: apiextensionsv1.ClusterScoped, Status: true,
			PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Capacity", Type: "string", JSONPath: ".spec.capacity.storage"},
				{Name: "Reclaim Policy", Type: "string", JSONPath: ".spec.persistentVolumeReclaimPolicy"},
				{Name: "Status", Type: "string", JSONPath: ".status.phase"},
				{Name: "Claim", Type: "string", JSONPath: ".spec.claimRef.name"},
				{Name: "StorageClass", Type: "string", JSONPath: ".spec.storageClassName"},
				age,
			},
		},
		{
			Model: corev1.Endpoints{}.OpenAPIModelName(), Group: "", Version: "v1",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "endpoints", Singular: "endpoints", Kind: "Endpoints", ShortNames: []string{"ep"}},
			Scope: apiextensionsv1.NamespaceScoped,
		},
	}
}
