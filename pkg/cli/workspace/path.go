package workspace

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// rootPath is the path of the root workspace.
var rootPath = logicalcluster.NewPath(string(logicalcluster.Root))

// clustersSegment introduces the logical cluster path in a workspace URL.
const clustersSegment = "/clusters/"

// serverURL is a kubeconfig server URL split into the base of the
// installation and, for a workspace URL, the path of the logical cluster.
type serverURL struct {
	// base is scheme://host[:port] plus any path prefix before /clusters/,
	// without a trailing slash.
	base string
	// path is the logical cluster path; it is empty when the URL does not
	// address a workspace.
	path logicalcluster.Path
}

// isWorkspace tells whether the URL addresses a logical cluster.
func (u serverURL) isWorkspace() bool { return !u.path.Empty() }

// parseServerURL splits a server URL. A URL addresses a workspace when its
// path ends in /clusters/<path> with a valid logical cluster path (a trailing
// slash is allowed); any other URL is a base URL.
func parseServerURL(server string) (serverURL, error) {
	u, err := url.Parse(server)
	if err != nil {
		return serverURL{}, fmt.Errorf("invalid server URL %q: %w", server, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return serverURL{}, fmt.Errorf("invalid server URL %q: scheme and host are required", server)
	}
	host := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.Path, "/")
	if i := strings.LastIndex(p+"/", clustersSegment); i >= 0 {
		rest := strings.TrimPrefix(p[i:], clustersSegment)
		if !strings.Contains(rest, "/") && logicalcluster.IsValidPath(rest) {
			return serverURL{base: host + p[:i], path: logicalcluster.NewPath(rest)}, nil
		}
	}
	return serverURL{base: host + p}, nil
}

// workspaceURL returns the URL of the logical cluster at path p under base.
func workspaceURL(base string, p logicalcluster.Path) string {
	return base + clustersSegment + p.String()
}

// targetKind says how a workspace argument is to be resolved.
type targetKind int

const (
	// targetCurrent is ".": print the current workspace.
	targetCurrent targetKind = iota
	// targetParent is "..".
	targetParent
	// targetPrevious is "-": swap current and previous workspace.
	targetPrevious
	// targetHome is "~" or no argument.
	targetHome
	// targetAbsolute is a full path such as root or root:a:b.
	targetAbsolute
	// targetRelative is the name of a child of the current workspace.
	targetRelative
)

// target is a parsed workspace argument.
type target struct {
	kind targetKind
	// path is the absolute path (targetAbsolute) or the one-segment name
	// (targetRelative).
	path logicalcluster.Path
}

// parseTarget parses the argument of "kubectl ws [arg]". home is the user's
// home directory, so that an unquoted ~ the shell expanded is still read as
// the home workspace; it may be empty.
func parseTarget(arg, home string) (target, error) {
	switch {
	case arg == "" || arg == "~" || (home != "" && strings.TrimSuffix(arg, "/") == strings.TrimSuffix(home, "/")):
		return target{kind: targetHome}, nil
	case arg == ".":
		return target{kind: targetCurrent}, nil
	case arg == "..":
		return target{kind: targetParent}, nil
	case arg == "-":
		return target{kind: targetPrevious}, nil
	}

	absolute := arg == rootPath.String() || strings.Contains(arg, logicalcluster.Separator)
	// A leading ':' (":root:a", as newer kcp writes absolute paths) is
	// accepted too.
	p := strings.TrimPrefix(arg, logicalcluster.Separator)
	if !logicalcluster.IsValidPath(p) {
		return target{}, fmt.Errorf("invalid workspace name or path %q", arg)
	}
	if absolute {
		return target{kind: targetAbsolute, path: logicalcluster.NewPath(p)}, nil
	}
	return target{kind: targetRelative, path: logicalcluster.NewPath(p)}, nil
}

// resolve returns the absolute path a relative, absolute or parent target
// stands for, given the current workspace (empty when the current URL is not
// a workspace URL). currentServer is only used in error messages.
func (t target) resolve(current logicalcluster.Path, currentServer string) (logicalcluster.Path, error) {
	switch t.kind {
	case targetAbsolute:
		return t.path, nil
	case targetRelative:
		if current.Empty() {
			return logicalcluster.Path{}, notWorkspaceURLError(currentServer)
		}
		return current.Join(t.path.String()), nil
	case targetParent:
		if current.Empty() {
			return logicalcluster.Path{}, notWorkspaceURLError(currentServer)
		}
		parent, ok := current.Parent()
		if !ok {
			return logicalcluster.Path{}, fmt.Errorf("workspace %q has no parent", current.String())
		}
		return parent, nil
	default:
		return logicalcluster.Path{}, fmt.Errorf("target kind %d has no path", t.kind)
	}
}

func notWorkspaceURLError(server string) error {
	return fmt.Errorf("current URL %q is not a workspace URL", server)
}
