package customresources

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/tessera-dev/tessera/shard/customresources/kubeprinters"
)

// tableConvertor returns what prints the objects of a served version of
// kind in tables (kubectl get): for the Kubernetes kinds a compute service
// binds (Deployments, Pods, Services, Endpoints, Ingresses) the table
// kube-apiserver prints for them, as kcp's users expect; for any other
// custom resource the version's additional printer columns.
func tableConvertor(kind schema.GroupVersionKind, v *apiextensionsv1.CustomResourceDefinitionVersion) (rest.TableConvertor, error) {
	if isBuiltinKind(kind) {
		if t := kubeprinters.ForKind(kind); t != nil {
			return t, nil
		}
	}
	return tableconvertor.New(printerColumns(v))
}
