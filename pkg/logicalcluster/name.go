// Package logicalcluster holds the names and paths of logical clusters, the
// kcp.io/cluster annotation and the request-context helpers shared by every
// Tessera component.
package logicalcluster

import (
	"context"
	"regexp"
	"strings"
)

// AnnotationKey is the annotation every stored object carries with the name
// of the logical cluster it lives in.
const AnnotationKey = "kcp.io/cluster"

// PathAnnotationKey is the annotation on a LogicalCluster that holds its
// canonical workspace path.
const PathAnnotationKey = "kcp.io/path"

// Separator separates the segments of a path.
const Separator = ":"

// Name is the name of a logical cluster, unique on a shard and across an
// installation. It is what appears in the kcp.io/cluster annotation.
type Name string

const (
	// Wildcard stands for every logical cluster of a shard.
	Wildcard Name = "*"
	// Root is the root logical cluster.
	Root Name = "root"
	// SystemAdmin is the shard-local cluster served at "/".
	SystemAdmin Name = "system:admin"
)

// String returns the name as a string.
func (n Name) String() string { return string(n) }

// Path returns the name as a one-segment (or, for system names, multi-segment) path.
func (n Name) Path() Path { return NewPath(string(n)) }

// Empty tells whether the name is unset.
func (n Name) Empty() bool { return n == "" }

// IsValid tells whether the name is a valid logical cluster name.
func (n Name) IsValid() bool { return n != Wildcard && IsValidPath(string(n)) }

// IsSystem tells whether the name is a shard-local system cluster (system:*).
func (n Name) IsSystem() bool { return strings.HasPrefix(string(n), "system:") }

var pathRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// IsValidPath tells whether s is a valid path: lower-case alphanumeric
// segments that may contain '-' inside, separated by ':'.
func IsValidPath(s string) bool {
	return len(s) <= 1024 && pathRE.MatchString(s)
}

// ValidationMessage explains what a valid logical cluster name looks like.
const ValidationMessage = "a logical cluster name must consist of lower case alphanumeric characters or '-', start and end with an alphanumeric character, with segments separated by ':' (e.g. 'root' or 'root:org:team')"

// Path is a colon-separated path of workspaces, e.g. root:org:team.
type Path struct {
	segments []string
}

// NewPath parses a path. It does not validate it.
func NewPath(s string) Path {
	if s == "" {
		return Path{}
	}
	return Path{segments: strings.Split(s, Separator)}
}

// String returns the path with ':' separators.
func (p Path) String() string { return strings.Join(p.segments, Separator) }

// Empty tells whether the path has no segments.
func (p Path) Empty() bool { return len(p.segments) == 0 }

// IsValid tells whether the path is well formed.
func (p Path) IsValid() bool { return IsValidPath(p.String()) }

// Base returns the last segment.
func (p Path) Base() string {
	if len(p.segments) == 0 {
		return ""
	}
	return p.segments[len(p.segments)-1]
}

// Parent returns the path without its last segment, and false at the top.
func (p Path) Parent() (Path, bool) {
	if len(p.segments) <= 1 {
		return Path{}, false
	}
	return Path{segments: append([]string(nil), p.segments[:len(p.segments)-1]...)}, true
}

// Join appends a segment.
func (p Path) Join(segment string) Path {
	s := make([]string, 0, len(p.segments)+1)
	s = append(append(s, p.segments...), segment)
	return Path{segments: s}
}

// Name returns the path as a logical cluster name, and false if it has more
// than one segment (then it is a workspace path that must be resolved).
func (p Path) Name() (Name, bool) {
	if len(p.segments) != 1 {
		return "", false
	}
	return Name(p.segments[0]), true
}

// Object is the part of metav1.Object these helpers need.
type Object interface {
	GetAnnotations() map[string]string
}

// From returns the logical cluster an object is stored in.
func From(obj Object) Name {
	return Name(obj.GetAnnotations()[AnnotationKey])
}

type contextKey int

const clusterKey contextKey = iota

// Cluster is the logical cluster a request addresses.
type Cluster struct {
	// Name of the logical cluster; empty when Wildcard is set.
	Name Name
	// Wildcard is set for /clusters/* requests.
	Wildcard bool
	// Path is the workspace path the request addressed the cluster by
	// (root:org:team), empty when it used the name. Messages to the
	// caller name the cluster by it: a workspace's logical cluster name is
	// not the caller's to learn.
	Path string
}

// String returns the cluster as the request addressed it: its path, its
// name, or * for all clusters.
func (c Cluster) String() string {
	switch {
	case c.Wildcard:
		return string(Wildcard)
	case c.Path != "":
		return c.Path
	}
	return string(c.Name)
}

// WithCluster returns a context that carries the request's logical cluster.
func WithCluster(ctx context.Context, c Cluster) context.Context {
	return context.WithValue(ctx, clusterKey, c)
}

// ClusterFrom returns the request's logical cluster, and false if none is set.
func ClusterFrom(ctx context.Context) (Cluster, bool) {
	c, ok := ctx.Value(clusterKey).(Cluster)
	return c, ok
}

// WithName is WithCluster for one named cluster.
func WithName(ctx context.Context, n Name) context.Context {
	return WithCluster(ctx, Cluster{Name: n})
}
