package workspace

import (
	"strings"
	"testing"
)

func TestWriteTree(t *testing.T) {
	leaf := func(name string) *treeNode { return &treeNode{name: name} }
	for _, tc := range []struct {
		name string
		root *treeNode
		want string
	}{
		{name: "alone", root: leaf("root:a"), want: ".\n└── root:a\n"},
		{
			name: "kcp example",
			root: &treeNode{name: "root", children: []*treeNode{
				{name: "a", children: []*treeNode{leaf("b")}},
				leaf("users"),
			}},
			want: `.
└── root
    ├── a
    │   └── b
    └── users
`,
		},
		{
			name: "deep and wide",
			root: &treeNode{name: "root", children: []*treeNode{
				{name: "a", children: []*treeNode{
					{name: "b", children: []*treeNode{leaf("c")}},
					leaf("d"),
				}},
				leaf("e"),
				{name: "f", children: []*treeNode{leaf("g"), leaf("h")}},
			}},
			want: `.
└── root
    ├── a
    │   ├── b
    │   │   └── c
    │   └── d
    ├── e
    └── f
        ├── g
        └── h
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeTree(&b, tc.root); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
