package initializingworkspaces

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/virtual/forward"
)

// PathPrefix prefixes every path of the virtual workspace. The initializer
// follows it, path-escaped or plain (root:mytype).
const PathPrefix = "/services/initializingworkspaces/"

// URLFor returns the path of the virtual workspace of an initializer,
// relative to the shard's base URL; clients append /clusters/*.
func URLFor(in corev1alpha1.LogicalClusterInitializer) string {
	return PathPrefix + url.PathEscape(string(in))
}

// ClusterOf returns the logical cluster a request to the virtual workspace
// addresses, the one in its path, or * for all; false if the path is not
// one the virtual workspace serves.
func ClusterOf(req *http.Request) (logicalcluster.Cluster, bool) {
	t, err := parsePath(req.URL.EscapedPath())
	if err != nil {
		return logicalcluster.Cluster{}, false
	}
	return t.cluster, true
}

// systemPrefix starts the names of built-in initializers.
const systemPrefix = "system:"

// target is a parsed request path.
type target struct {
	initializer corev1alpha1.LogicalClusterInitializer
	cluster     logicalcluster.Cluster
	// segments are the unescaped segments of the path inside the logical
	// cluster. parsePath checked them: none is empty, "." or "..", or holds
	// a '/', '\\', '%' or a control character.
	segments []string
}

// clusterPath returns the escaped path of the logical cluster on the shard:
// /clusters/<name> or /clusters/*.
func (t target) clusterPath() string {
	if t.cluster.Wildcard {
		return "/clusters/" + string(logicalcluster.Wildcard)
	}
	return "/clusters/" + string(t.cluster.Name)
}

// restPath returns the escaped path inside the logical cluster, built from
// the checked segments only, so that the shard sees exactly the path the
// handler decided on: empty, or starting with "/".
func (t target) restPath() string { return forward.Join(t.segments) }

// parsePath splits an escaped request path under PathPrefix into the
// initializer, the logical cluster and the path inside it. It fails with a
// NotFound Status for paths the virtual workspace does not serve and with
// a BadRequest for an invalid initializer or cluster name.
func parsePath(escaped string) (target, error) {
	if !strings.HasPrefix(escaped, PathPrefix) {
		return target{}, errPathNotFound()
	}
	rawInit, after, ok := strings.Cut(escaped[len(PathPrefix):], "/")
	if !ok || rawInit == "" {
		return target{}, errPathNotFound()
	}
	in, err := url.PathUnescape(rawInit)
	if err != nil {
		return target{}, apierrors.NewBadRequest(fmt.Sprintf("invalid initializer %q in path: %v", rawInit, err))
	}
	if err := validateInitializer(corev1alpha1.LogicalClusterInitializer(in)); err != nil {
		return target{}, apierrors.NewBadRequest(err.Error())
	}
	const clusters = "clusters/"
	if !strings.HasPrefix(after, clusters) {
		return target{}, errPathNotFound()
	}
	rawCluster, rest, hasRest := strings.Cut(after[len(clusters):], "/")
	name, err := url.PathUnescape(rawCluster)
	if err != nil || name == "" {
		return target{}, errPathNotFound()
	}
	t := target{initializer: corev1alpha1.LogicalClusterInitializer(in)}
	switch {
	case name == string(logicalcluster.Wildcard):
		t.cluster = logicalcluster.Cluster{Wildcard: true}
	case logicalcluster.Name(name).IsValid():
		t.cluster = logicalcluster.Cluster{Name: logicalcluster.Name(name)}
	default:
		return target{}, apierrors.NewBadRequest(fmt.Sprintf("invalid logical cluster name %q: %s", name, logicalcluster.ValidationMessage))
	}
	if !hasRest {
		return t, nil
	}
	if t.segments, err = forward.Segments(rest); err != nil {
		return target{}, err
	}
	return t, nil
}

var (
	typeNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// systemNameRE matches the names of built-in initializers after
	// "system:"; they end up in the user name the content proxy
	// impersonates.
	systemNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$`)
)

// validateInitializer accepts the initializer of a WorkspaceType,
// "<logical cluster>:<type name>", and built-in ones, "system:<name>".
func validateInitializer(in corev1alpha1.LogicalClusterInitializer) error {
	s := string(in)
	if name, ok := strings.CutPrefix(s, systemPrefix); ok {
		if len(name) > 253 || !systemNameRE.MatchString(name) {
			return fmt.Errorf("invalid initializer %q: a system initializer is system:<name>, lower case alphanumeric characters, '-', '.' or ':'", s)
		}
		return nil
	}
	cluster, name, ok := tenancyv1alpha1.TypeForInitializer(in)
	if !ok || !logicalcluster.Name(cluster).IsValid() || len(name) > 63 || !typeNameRE.MatchString(string(name)) {
		return fmt.Errorf("invalid initializer %q: it must be <logical cluster>:<workspace type name>, e.g. root:mytype", s)
	}
	return nil
}

// errPathNotFound is the Status of a path the virtual workspace does not
// serve, as an API server answers it.
func errPathNotFound() *apierrors.StatusError { return forward.ErrPathNotFound() }
