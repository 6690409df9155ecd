package workspace

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// treeNode is a workspace in the printed tree.
type treeNode struct {
	name     string
	children []*treeNode
}

// writeTree prints the tree kcp style: a "." line, then root and its
// descendants with box-drawing branches.
func writeTree(w io.Writer, root *treeNode) error {
	var b strings.Builder
	b.WriteString(".\n")
	writeBranches(&b, []*treeNode{root}, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeBranches(b *strings.Builder, nodes []*treeNode, prefix string) {
	for i, n := range nodes {
		branch, indent := "├── ", "│   "
		if i == len(nodes)-1 {
			branch, indent = "└── ", "    "
		}
		b.WriteString(prefix + branch + n.name + "\n")
		writeBranches(b, n.children, prefix+indent)
	}
}

// tree prints the workspaces from the current one down.
func tree(ctx context.Context, s *session) error {
	current, err := s.currentPath()
	if err != nil {
		return err
	}
	root := &treeNode{name: current.String()}
	if err := s.addChildren(ctx, root, current); err != nil {
		return err
	}
	return writeTree(s.out, root)
}

// addChildren lists the workspaces in the logical cluster at p as children
// of n, sorted by name, and descends into the Ready ones. A level the
// caller may not list is shown without children.
func (s *session) addChildren(ctx context.Context, n *treeNode, p logicalcluster.Path) error {
	c, err := s.client(p)
	if err != nil {
		return err
	}
	list, err := c.Workspaces().List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing workspaces in %q: %w", p.String(), err)
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for i := range items {
		child := &treeNode{name: items[i].Name}
		n.children = append(n.children, child)
		if !isReady(&items[i]) {
			continue
		}
		if err := s.addChildren(ctx, child, p.Join(items[i].Name)); err != nil {
			return err
		}
	}
	return nil
}
