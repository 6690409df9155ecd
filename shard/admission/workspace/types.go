package workspace

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// clusterRef is a logical cluster of this shard with its canonical path.
type clusterRef struct {
	cluster logicalcluster.Name
	path    logicalcluster.Path
}

var rootRef = clusterRef{cluster: logicalcluster.Root, path: logicalcluster.Root.Path()}

// wsType is a WorkspaceType found on this shard.
type wsType struct {
	clusterRef
	name tenancyv1alpha1.WorkspaceTypeName
	// obj is nil only for root:root when no such object exists: the
	// implicit type of the root logical cluster, with no rules.
	obj *tenancyv1alpha1.WorkspaceType
}

// String returns the qualified name of the type, "<path>:<name>".
func (t *wsType) String() string {
	return t.path.Join(string(t.name)).String()
}

// parentInfo is the logical cluster a workspace is created in.
type parentInfo struct {
	clusterRef
	typ *wsType
}

// unresolvedError says that a workspace type reference names no type: the
// request is invalid.
type unresolvedError struct {
	ref string // the reference, as written
	msg string
}

func (e *unresolvedError) Error() string { return e.msg }

// resolver looks workspace types up for one request, reading each at most
// once.
type resolver struct {
	cfg Config
	// Cache audit (issue 9): cluster-keyed, and lives for one request.
	types map[string]*wsType // cluster|name; nil value: not found
}

func (p *Plugin) newResolver() *resolver {
	return &resolver{cfg: p.cfg, types: map[string]*wsType{}}
}

// canonicalPath returns the canonical path of a logical cluster of this
// shard: its kcp.io/path annotation, else fallback.
func (r *resolver) canonicalPath(name logicalcluster.Name, fallback logicalcluster.Path) logicalcluster.Path {
	if lc, err := r.cfg.LogicalCluster(name); err == nil {
		if p := lc.Annotations[logicalcluster.PathAnnotationKey]; p != "" {
			return logicalcluster.NewPath(p)
		}
	}
	return fallback
}

// resolvePath returns the logical cluster of this shard path addresses. A
// one-segment path that ResolvePath does not know may be the name of a
// local logical cluster; "root" is always the root logical cluster.
func (r *resolver) resolvePath(path logicalcluster.Path) (clusterRef, bool) {
	if name, ok := r.cfg.ResolvePath(path); ok {
		return clusterRef{cluster: name, path: r.canonicalPath(name, path)}, true
	}
	if name, ok := path.Name(); ok && name == logicalcluster.Root {
		return clusterRef{cluster: name, path: r.canonicalPath(name, path)}, true
	}
	if name, ok := path.Name(); ok && name.IsValid() {
		if _, err := r.cfg.LogicalCluster(name); err == nil {
			return clusterRef{cluster: name, path: r.canonicalPath(name, path)}, true
		}
	}
	return clusterRef{}, false
}

// get returns the type name of cluster c, or nil if there is none.
func (r *resolver) get(c clusterRef, name tenancyv1alpha1.WorkspaceTypeName) (*wsType, error) {
	key := string(c.cluster) + "|" + string(name)
	if t, ok := r.types[key]; ok {
		return t, nil
	}
	obj, err := r.cfg.WorkspaceType(c.cluster, string(name))
	var t *wsType
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, apierrors.NewInternalError(fmt.Errorf("looking up workspace type %s in logical cluster %q: %w", name, c.cluster, err))
	default:
		t = &wsType{clusterRef: c, name: name, obj: obj}
	}
	r.types[key] = t
	return t, nil
}

// lookupOrder is where a reference without path is looked up, relative to
// cluster c: in c, then in root.
func lookupOrder(c clusterRef) []clusterRef {
	if c.cluster == logicalcluster.Root {
		return []clusterRef{c}
	}
	return []clusterRef{c, rootRef}
}

// resolveRef returns the type ref names. A reference with a path is looked
// up in the logical cluster of that path; one without in each cluster of
// order until found. It fails with an *unresolvedError when there is no
// such type.
func (r *resolver) resolveRef(ref tenancyv1alpha1.WorkspaceTypeReference, order []clusterRef) (*wsType, error) {
	if ref.Path != "" {
		path := logicalcluster.NewPath(ref.Path)
		c, ok := r.resolvePath(path)
		if !ok {
			return nil, &unresolvedError{ref.String(), fmt.Sprintf("workspace type %q cannot be resolved: the path %q is not known on this shard", ref.String(), ref.Path)}
		}
		t, err := r.get(c, ref.Name)
		if err != nil {
			return nil, err
		}
		if t == nil {
			return nil, &unresolvedError{ref.String(), fmt.Sprintf("workspace type %q does not exist", ref.String())}
		}
		return t, nil
	}
	var searched []string
	for _, c := range order {
		t, err := r.get(c, ref.Name)
		if err != nil || t != nil {
			return t, err
		}
		searched = append(searched, fmt.Sprintf("%q", c.path.String()))
	}
	return nil, &unresolvedError{ref.String(), fmt.Sprintf("workspace type %q does not exist in %s", ref.Name, strings.Join(searched, " or "))}
}

// parent returns the logical cluster cluster with its canonical path and
// workspace type: the type its LogicalCluster's type annotation names, or
// root:root for the root logical cluster.
func (r *resolver) parent(cluster logicalcluster.Name) (parentInfo, error) {
	lc, err := r.cfg.LogicalCluster(cluster)
	switch {
	case apierrors.IsNotFound(err) && cluster == logicalcluster.Root:
		lc = &corev1alpha1.LogicalCluster{}
	case apierrors.IsNotFound(err):
		return parentInfo{}, fmt.Errorf("logical cluster %q does not exist", cluster)
	case err != nil:
		return parentInfo{}, apierrors.NewInternalError(fmt.Errorf("looking up logical cluster %q: %w", cluster, err))
	}
	p := parentInfo{clusterRef: clusterRef{cluster: cluster, path: cluster.Path()}}
	if path := lc.Annotations[logicalcluster.PathAnnotationKey]; path != "" {
		p.path = logicalcluster.NewPath(path)
	}

	annotation := lc.Annotations[corev1alpha1.LogicalClusterTypeAnnotationKey]
	typePath, typeName := logicalcluster.Root.Path(), tenancyv1alpha1.RootWorkspaceTypeName
	switch i := strings.LastIndex(annotation, ":"); {
	case annotation == "" && cluster == logicalcluster.Root:
	case annotation == "":
		return parentInfo{}, fmt.Errorf("the type of logical cluster %q is unknown: annotation %s is not set on its LogicalCluster",
			p.path, corev1alpha1.LogicalClusterTypeAnnotationKey)
	case i <= 0 || i == len(annotation)-1:
		return parentInfo{}, fmt.Errorf("the type of logical cluster %q is unknown: annotation %s=%q is not of the form <path>:<name>",
			p.path, corev1alpha1.LogicalClusterTypeAnnotationKey, annotation)
	default:
		typePath, typeName = logicalcluster.NewPath(annotation[:i]), tenancyv1alpha1.WorkspaceTypeName(annotation[i+1:])
	}

	if typePath.String() == logicalcluster.Root.String() && typeName == tenancyv1alpha1.RootWorkspaceTypeName {
		t, err := r.get(rootRef, typeName)
		if err != nil {
			return parentInfo{}, err
		}
		if t == nil {
			t = &wsType{clusterRef: rootRef, name: typeName}
		}
		p.typ = t
		return p, nil
	}
	t, err := r.resolveRef(tenancyv1alpha1.WorkspaceTypeReference{Path: typePath.String(), Name: typeName}, nil)
	if err != nil {
		return parentInfo{}, wrapResolveError(err, "the type of logical cluster %q cannot be resolved", p.path)
	}
	p.typ = t
	return p, nil
}

// withExtended returns t followed by every type it extends, transitively,
// each once.
func (r *resolver) withExtended(t *wsType) ([]*wsType, error) {
	var all []*wsType
	seen := map[string]bool{}
	var walk func(t *wsType) error
	walk = func(t *wsType) error {
		if seen[t.String()] {
			return nil
		}
		seen[t.String()] = true
		all = append(all, t)
		if t.obj == nil {
			return nil
		}
		for _, ref := range t.obj.Spec.Extend.With {
			base, err := r.resolveRef(ref, lookupOrder(t.clusterRef))
			if err != nil {
				return wrapResolveError(err, "workspace type %s extends %s, which cannot be resolved", t, ref.String())
			}
			if err := walk(base); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(t); err != nil {
		return nil, err
	}
	return all, nil
}

// defaultChildType returns the type of child workspaces created without
// one in a cluster of type parent, and the cluster where it is declared: the
// defaultChildWorkspaceType of parent or else of the first type it
// extends that has one, else root:universal.
func (r *resolver) defaultChildType(parent *wsType) (tenancyv1alpha1.WorkspaceTypeReference, clusterRef, error) {
	types, err := r.withExtended(parent)
	if err != nil {
		return tenancyv1alpha1.WorkspaceTypeReference{}, clusterRef{}, err
	}
	for _, t := range types {
		if t.obj != nil && t.obj.Spec.DefaultChildWorkspaceType != nil {
			return *t.obj.Spec.DefaultChildWorkspaceType, t.clusterRef, nil
		}
	}
	return tenancyv1alpha1.WorkspaceTypeReference{Path: rootRef.path.String(), Name: tenancyv1alpha1.UniversalWorkspaceTypeName}, rootRef, nil
}

// qualified returns the qualified name of a type reference in the spec of
// type declaredIn; a reference without path is relative to its cluster.
func qualified(ref tenancyv1alpha1.WorkspaceTypeReference, declaredIn *wsType) string {
	path := ref.Path
	if path == "" {
		path = declaredIn.path.String()
	}
	return path + ":" + string(ref.Name)
}

// matches tells whether a type, given with the types it extends, is one
// of refs, which the spec of declaredIn lists.
func matches(types []*wsType, refs []tenancyv1alpha1.WorkspaceTypeReference, declaredIn *wsType) bool {
	for _, ref := range refs {
		q := qualified(ref, declaredIn)
		for _, t := range types {
			if t.String() == q {
				return true
			}
		}
	}
	return false
}

// listed returns the sorted qualified names of refs in the spec of
// declaredIn.
func listed(refs []tenancyv1alpha1.WorkspaceTypeReference, declaredIn *wsType) []string {
	names := make([]string, 0, len(refs))
	for _, ref := range refs {
		names = append(names, qualified(ref, declaredIn))
	}
	slices.Sort(names)
	return names
}

// describe names t, or t through main when main extends t.
func describe(main, t *wsType) string {
	if main == t {
		return main.String()
	}
	return fmt.Sprintf("%s, which extends %s,", main, t)
}

// allowedParents refuses a child type (child: it and the types it extends)
// whose limitAllowedParents excludes the parent's type.
func allowedParents(parent parentInfo, parentTypes, child []*wsType) error {
	for _, c := range child {
		sel := c.obj.Spec.LimitAllowedParents
		switch {
		case sel == nil:
		case sel.None:
			return fmt.Errorf("workspace type %s cannot have a parent workspace", describe(child[0], c))
		case !matches(parentTypes, sel.Types, c):
			return fmt.Errorf("workspace type %s only allows parent types %v; the parent %q is of type %s",
				describe(child[0], c), listed(sel.Types, c), parent.path.String(), parent.typ)
		}
	}
	return nil
}

// allowedChildren refuses a child type that the limitAllowedChildren of
// the parent's type (parentTypes: it and the types it extends) excludes.
func allowedChildren(parent parentInfo, parentTypes, child []*wsType) error {
	for _, pt := range parentTypes {
		if pt.obj == nil {
			continue
		}
		sel := pt.obj.Spec.LimitAllowedChildren
		switch {
		case sel == nil:
		case sel.None:
			return fmt.Errorf("the parent %q is of type %s which allows no child workspaces", parent.path.String(), describe(parentTypes[0], pt))
		case !matches(child, sel.Types, pt):
			return fmt.Errorf("the parent %q is of type %s which only allows child types %v; workspace type %s is not one of them",
				parent.path.String(), describe(parentTypes[0], pt), listed(sel.Types, pt), child[0])
		}
	}
	return nil
}

// wrapResolveError adds context to an error of resolveRef. A type that
// does not exist becomes a plain error: here it is not the request's fault.
func wrapResolveError(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	var unresolved *unresolvedError
	if errors.As(err, &unresolved) {
		return fmt.Errorf("%s: %s", msg, unresolved.msg)
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// forbidden returns err as it is if it already is an API status (an
// internal error), else as a 403 for the request.
func forbidden(a admission.Attributes, err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	return admission.NewForbidden(a, err)
}

// refError returns the error of a workspace type reference that cannot be
// resolved: 422 when it names no type, else as forbidden does.
func refError(a admission.Attributes, err error) error {
	var unresolved *unresolvedError
	if errors.As(err, &unresolved) {
		return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("spec", "type"), unresolved.ref, unresolved.msg)})
	}
	return forbidden(a, err)
}
