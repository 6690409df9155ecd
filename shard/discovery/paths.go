package discovery

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pathKind is what a request path asks for.
type pathKind int

const (
	// otherPath is not a per-cluster document: the wrapped handler serves it.
	otherPath pathKind = iota
	// coreAPIsPath is /api: its aggregated discovery lists the core
	// group's resources.
	coreAPIsPath
	// coreVersionPath is /api/v1.
	coreVersionPath
	// apisPath is /apis, the list of API groups.
	apisPath
	// groupPath is /apis/<group>.
	groupPath
	// groupVersionPath is /apis/<group>/<version>.
	groupVersionPath
	// openAPIV2DocPath is /openapi/v2.
	openAPIV2DocPath
	// openAPIV3RootPath is /openapi/v3.
	openAPIV3RootPath
	// openAPIV3DocPath is /openapi/v3/<path>, e.g. /openapi/v3/apis/apps/v1.
	openAPIV3DocPath
)

// request is a parsed request path.
type request struct {
	kind pathKind
	// gv is the group (and version) of group and group version paths.
	gv schema.GroupVersion
	// openAPIV3Path is the path below /openapi/v3/ of an OpenAPI v3 document.
	openAPIV3Path string
}

// parsePath tells which document a path (after the /clusters/<name> prefix
// has been stripped) asks for.
func parsePath(p string) request {
	switch {
	case p == "/api" || p == "/api/":
		return request{kind: coreAPIsPath}
	case p == "/api/v1" || p == "/api/v1/":
		return request{kind: coreVersionPath, gv: coreV1}
	case p == openAPIV2Path:
		return request{kind: openAPIV2DocPath}
	case p == openAPIV3Prefix:
		return request{kind: openAPIV3RootPath}
	case strings.HasPrefix(p, openAPIV3Prefix+"/"):
		return request{kind: openAPIV3DocPath, openAPIV3Path: p[len(openAPIV3Prefix)+1:]}
	case p == "/apis" || p == "/apis/":
		return request{kind: apisPath}
	case strings.HasPrefix(p, "/apis/"):
		segments := strings.Split(strings.TrimSuffix(p[len("/apis/"):], "/"), "/")
		for _, s := range segments {
			if s == "" {
				return request{}
			}
		}
		switch len(segments) {
		case 1:
			return request{kind: groupPath, gv: schema.GroupVersion{Group: segments[0]}}
		case 2:
			return request{kind: groupVersionPath, gv: schema.GroupVersion{Group: segments[0], Version: segments[1]}}
		}
	}
	return request{}
}
