package published

import (
	"crypto/sha1" //nolint:gosec // a naming hash, as the spec fixes it, not a security measure
	"encoding/hex"
	"strings"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

// The placeholders of naming templates.
const (
	PlaceholderClusterName   = "$remoteClusterName"
	PlaceholderNamespace     = "$remoteNamespace"
	PlaceholderNamespaceHash = "$remoteNamespaceHash"
	PlaceholderName          = "$remoteName"
	PlaceholderNameHash      = "$remoteNameHash"
)

// The default naming templates: one namespace per workspace, names made of
// the hashes of the remote namespace and name, so nothing collides.
const (
	DefaultNamespaceTemplate = PlaceholderClusterName
	DefaultNameTemplate      = PlaceholderNamespaceHash + "-" + PlaceholderNameHash
)

// Remote identifies an object in a platform workspace.
type Remote struct {
	// Cluster is the logical cluster name of the workspace.
	Cluster string
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is the object's name.
	Name string
}

// Hash returns the first 20 hex digits of the SHA-1 of s.
func Hash(s string) string {
	sum := sha1.Sum([]byte(s)) //nolint:gosec // see import
	return hex.EncodeToString(sum[:])[:20]
}

// Templates returns the namespace and name templates of a naming, the
// defaults where unset.
func Templates(n *servicesv1alpha1.ResourceNaming) (namespace, name string) {
	namespace, name = DefaultNamespaceTemplate, DefaultNameTemplate
	if n != nil && n.Namespace != "" {
		namespace = n.Namespace
	}
	if n != nil && n.Name != "" {
		name = n.Name
	}
	return namespace, name
}

// Expand replaces the placeholders of a template with r's values. Longer
// placeholders win over their prefixes ($remoteNameHash over $remoteName).
func Expand(template string, r Remote) string {
	return strings.NewReplacer(
		PlaceholderClusterName, r.Cluster,
		PlaceholderNamespaceHash, Hash(r.Namespace),
		PlaceholderNamespace, r.Namespace,
		PlaceholderNameHash, Hash(r.Name),
		PlaceholderName, r.Name,
	).Replace(template)
}

// LocalName returns the namespace and name of r's local copy under naming
// n. The namespace is empty when the local resource is cluster-scoped.
func LocalName(n *servicesv1alpha1.ResourceNaming, r Remote, localNamespaced bool) (namespace, name string) {
	nsTemplate, nameTemplate := Templates(n)
	if localNamespaced {
		namespace = Expand(nsTemplate, r)
	}
	return namespace, Expand(nameTemplate, r)
}
