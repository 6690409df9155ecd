package storage

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// The etcd key layout of a shard, in one place. Below the storage prefix
// (/registry by default) every resource has a prefix, "/<group>/<resource>"
// ("/<resource>" for the core group, or an override), and custom resources
// "/<group>/<resource>/customresources"; the logical cluster is the next
// segment, then the namespace (for namespaced resources) and the name:
//
//	/registry/configmaps/<cluster>/<namespace>/<name>
//	/registry/apiextensions.k8s.io/customresourcedefinitions/<cluster>/<plural>.<group>
//	/registry/<group>/<plural>/customresources/<cluster>/<namespace>/<name>
//	/registry/<group>/<plural>/<identityHash>/<cluster>/<namespace>/<name>
//
// The last are resources bound through an APIExport: they are stored under
// the export's identity (64 hex digits), so exports of the same
// group/resource with different identities never share objects.

// CustomResourcePrefix is the prefix, below the storage prefix, of the
// custom resources of resource in every logical cluster.
func CustomResourcePrefix(resource schema.GroupResource) string {
	return "/" + resource.Group + "/" + resource.Resource + "/customresources"
}

// BoundResourcePrefix is the prefix, below the storage prefix, of the
// objects of resource bound through the APIExport with identity hash
// identity, in every logical cluster.
func BoundResourcePrefix(resource schema.GroupResource, identity string) string {
	return "/" + resource.Group + "/" + resource.Resource + "/" + identity
}

// ClusterPrefix is the etcd key prefix of the objects of one logical
// cluster under a resource prefix: root (the storage prefix, with or
// without a trailing slash) + resourcePrefix + "/<cluster>/". The trailing
// slash keeps sibling clusters ("a", "a-b") apart.
func ClusterPrefix(root, resourcePrefix string, cluster logicalcluster.Name) string {
	return strings.TrimSuffix(root, "/") + resourcePrefix + "/" + string(cluster) + "/"
}

// CustomResourceOfCRD returns the resource a CustomResourceDefinition
// defines from its name, "<plural>.<group>", which its validation makes
// the same as spec.names.plural and spec.group. It needs no decoding, so
// the custom resources of a CRD that cannot be decoded are found too.
func CustomResourceOfCRD(name string) (schema.GroupResource, bool) {
	plural, group, ok := strings.Cut(name, ".")
	if !ok || plural == "" || group == "" {
		return schema.GroupResource{}, false
	}
	return schema.GroupResource{Group: group, Resource: plural}, true
}

// PrefixEnd returns the first key after every key that starts with prefix,
// as clientv3.GetPrefixRangeEnd does.
func PrefixEnd(prefix string) string {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return string(end[:i+1])
		}
	}
	return "\x00"
}
