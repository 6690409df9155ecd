package apibinding

import (
	"strings"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ByBoundResource indexes APIBindings by BoundResourceKey of each resource
// in their status.boundResources. The shard adds it to its APIBinding
// informer; the controller and the serving of bound resources read it.
const ByBoundResource = "apis.kcp.io/bound-resource"

// BoundResourceKey is "<cluster>|<resource>.<group>".
func BoundResourceKey(cluster logicalcluster.Name, group, resource string) string {
	return string(cluster) + "|" + resource + "." + group
}

// BoundResourceIndex is the index function of ByBoundResource.
func BoundResourceIndex(obj any) ([]string, error) {
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok {
		return nil, nil
	}
	cluster := logicalcluster.From(b)
	keys := make([]string, 0, len(b.Status.BoundResources))
	for _, r := range b.Status.BoundResources {
		keys = append(keys, BoundResourceKey(cluster, r.Group, r.Resource))
	}
	return keys, nil
}

// ByExport indexes APIBindings by "<export cluster>|<export name>" once
// they have resolved their export, and by "ref:<path>|<export name>" as
// their reference names it (the path is the binding's own cluster when the
// reference has none), so that a change of an export reconciles the
// bindings that use it or wait for it.
const ByExport = "apis.kcp.io/export"

// ExportKey is "<cluster>|<name>".
func ExportKey(cluster logicalcluster.Name, name string) string { return string(cluster) + "|" + name }

// ExportIndex is the index function of ByExport.
func ExportIndex(obj any) ([]string, error) {
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok || b.Spec.Reference.Export == nil {
		return nil, nil
	}
	ref := b.Spec.Reference.Export
	path := ref.Path
	if path == "" {
		path = logicalcluster.From(b).String()
	}
	keys := []string{RefKey(path, ref.Name)}
	if b.Status.APIExportClusterName != "" {
		keys = append(keys, ExportKey(logicalcluster.Name(b.Status.APIExportClusterName), ref.Name))
	}
	return keys, nil
}

// RefKey is "ref:<path>|<name>".
func RefKey(path, name string) string { return "ref:" + path + "|" + name }

// ByIdentity indexes APIBindings by the BoundSchema of each bound
// resource. Its values are the distinct (identity, resource, schema)
// triples bound on the shard, a handful however many bindings there are:
// readers list the values (ListIndexFuncValues) rather than the bindings.
const ByIdentity = "apis.kcp.io/identity"

// BoundSchema is what a ByIdentity value says: a resource bound under an
// identity with a schema of an export cluster.
type BoundSchema struct {
	Identity      string
	Name          string // <resource>.<group>
	SchemaCluster logicalcluster.Name
	Schema        string
	SchemaUID     string
}

// String is the index value:
// <identity>|<resource>.<group>|<schema cluster>|<schema>|<uid>.
func (k BoundSchema) String() string {
	return k.Identity + "|" + k.Name + "|" + string(k.SchemaCluster) + "|" + k.Schema + "|" + k.SchemaUID
}

// ParseBoundSchema parses a ByIdentity value.
func ParseBoundSchema(value string) (BoundSchema, bool) {
	parts := strings.Split(value, "|")
	if len(parts) != 5 {
		return BoundSchema{}, false
	}
	return BoundSchema{Identity: parts[0], Name: parts[1], SchemaCluster: logicalcluster.Name(parts[2]), Schema: parts[3], SchemaUID: parts[4]}, true
}

// IdentityIndex is the index function of ByIdentity.
func IdentityIndex(obj any) ([]string, error) {
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok {
		return nil, nil
	}
	keys := make([]string, 0, len(b.Status.BoundResources))
	for _, r := range b.Status.BoundResources {
		keys = append(keys, BoundSchema{
			Identity:      r.Schema.IdentityHash,
			Name:          r.Resource + "." + r.Group,
			SchemaCluster: logicalcluster.Name(b.Status.APIExportClusterName),
			Schema:        r.Schema.Name,
			SchemaUID:     r.Schema.UID,
		}.String())
	}
	return keys, nil
}

// ByExportIdentity indexes APIExports by status.identityHash.
const ByExportIdentity = "apis.kcp.io/export-identity"

// ExportIdentityIndex is the index function of ByExportIdentity.
func ExportIdentityIndex(obj any) ([]string, error) {
	e, ok := obj.(*apisv1alpha1.APIExport)
	if !ok || e.Status.IdentityHash == "" {
		return nil, nil
	}
	return []string{e.Status.IdentityHash}, nil
}
