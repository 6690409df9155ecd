package workspace

import (
	"strings"
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestParseServerURL(t *testing.T) {
	for _, tc := range []struct {
		server   string
		wantBase string
		wantPath string
		wantErr  bool
	}{
		{server: "https://kcp:6443/clusters/root", wantBase: "https://kcp:6443", wantPath: "root"},
		{server: "https://kcp:6443/clusters/root:a:b/", wantBase: "https://kcp:6443", wantPath: "root:a:b"},
		{server: "https://kcp/prefix/clusters/root:a", wantBase: "https://kcp/prefix", wantPath: "root:a"},
		{server: "https://kcp/clusters/root:clusters", wantBase: "https://kcp", wantPath: "root:clusters"},
		{server: "https://kcp:6443", wantBase: "https://kcp:6443"},
		{server: "https://kcp:6443/", wantBase: "https://kcp:6443"},
		{server: "https://kcp:6443/prefix", wantBase: "https://kcp:6443/prefix"},
		{server: "https://kcp:6443/clusters", wantBase: "https://kcp:6443/clusters"},
		{server: "https://kcp:6443/clusters/*", wantBase: "https://kcp:6443/clusters/*"},
		{server: "https://kcp:6443/clusters/root/api", wantBase: "https://kcp:6443/clusters/root/api"},
		{server: "kcp:6443", wantErr: true},
		{server: "://", wantErr: true},
	} {
		t.Run(tc.server, func(t *testing.T) {
			u, err := parseServerURL(tc.server)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if u.base != tc.wantBase || u.path.String() != tc.wantPath {
				t.Errorf("got base %q path %q, want base %q path %q", u.base, u.path, tc.wantBase, tc.wantPath)
			}
			if u.isWorkspace() != (tc.wantPath != "") {
				t.Errorf("isWorkspace is %v", u.isWorkspace())
			}
			if u.isWorkspace() {
				if got := workspaceURL(u.base, u.path); got != stripSlash(tc.server) {
					t.Errorf("workspaceURL gives %q back", got)
				}
			}
		})
	}
}

func stripSlash(s string) string {
	if len(s) > 0 && s[len(s)-1] == '/' {
		return s[:len(s)-1]
	}
	return s
}

func TestParseTargetAndResolve(t *testing.T) {
	const home = "/home/alice"
	for _, tc := range []struct {
		arg      string
		current  string
		wantKind targetKind
		wantPath string // resolved absolute path, for kinds that have one
		wantErr  string // of parseTarget or resolve
	}{
		{arg: "", wantKind: targetHome},
		{arg: "~", wantKind: targetHome},
		{arg: home, wantKind: targetHome},
		{arg: home + "/", wantKind: targetHome},
		{arg: ".", wantKind: targetCurrent},
		{arg: "-", wantKind: targetPrevious},
		{arg: "..", current: "root:a:b", wantKind: targetParent, wantPath: "root:a"},
		{arg: "..", current: "root:a", wantKind: targetParent, wantPath: "root"},
		{arg: "..", current: "root", wantKind: targetParent, wantErr: `workspace "root" has no parent`},
		{arg: "..", wantKind: targetParent, wantErr: "is not a workspace URL"},
		{arg: "b", current: "root:a", wantKind: targetRelative, wantPath: "root:a:b"},
		{arg: "b", wantKind: targetRelative, wantErr: "is not a workspace URL"},
		{arg: "root", current: "root:a", wantKind: targetAbsolute, wantPath: "root"},
		{arg: "root", wantKind: targetAbsolute, wantPath: "root"},
		{arg: "root:x:y", current: "root:a", wantKind: targetAbsolute, wantPath: "root:x:y"},
		{arg: ":root:x", wantKind: targetAbsolute, wantPath: "root:x"},
		{arg: "other:x", wantKind: targetAbsolute, wantPath: "other:x"},
		{arg: "rooty", current: "root", wantKind: targetRelative, wantPath: "root:rooty"},
		{arg: "Upper", wantErr: `invalid workspace name or path "Upper"`},
		{arg: "a:", wantErr: `invalid workspace name or path "a:"`},
		{arg: "a::b", wantErr: `invalid workspace name or path "a::b"`},
		{arg: "a/b", wantErr: `invalid workspace name or path "a/b"`},
		{arg: "...", wantErr: `invalid workspace name or path "..."`},
	} {
		t.Run(tc.arg+"@"+tc.current, func(t *testing.T) {
			tg, err := parseTarget(tc.arg, home)
			resolvable := tg.kind == targetParent || tg.kind == targetRelative || tg.kind == targetAbsolute
			if err == nil && resolvable {
				var p logicalcluster.Path
				p, err = tg.resolve(logicalcluster.NewPath(tc.current), "https://kcp")
				if err == nil && p.String() != tc.wantPath {
					t.Errorf("resolved to %q, want %q", p, tc.wantPath)
				}
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.kind != tc.wantKind {
				t.Errorf("kind %d, want %d", tg.kind, tc.wantKind)
			}
		})
	}
}
