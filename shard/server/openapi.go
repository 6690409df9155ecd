package server

import (
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/server/routes"
	"k8s.io/kube-openapi/pkg/cached"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// installOpenAPI serves the built-in OpenAPI documents in place of
// k8s.io/apiserver's PrepareRun (the config sets SkipOpenAPIInstallation):
// /openapi/v3 as it does, and /openapi/v2 built by the same code on its
// first request instead of before the shard serves. Building the v2
// document of every built-in API took about 50 ms of each start; kubectl
// reads /openapi/v3.
func (s *Server) installOpenAPI() {
	g := s.GenericAPIServer
	cfg := s.CompletedConfig.Generic
	if cfg.OpenAPIV3Config != nil {
		g.OpenAPIV3VersionedService = routes.OpenAPI{V3Config: cfg.OpenAPIV3Config}.InstallV3(g.Handler.GoRestfulContainer, g.Handler.NonGoRestfulMux)
	}
	if cfg.OpenAPIConfig == nil {
		return
	}
	v2 := cached.Once(cached.Func(func() (*spec.Swagger, string, error) {
		// InstallV2 registers its handler on a mux of its own, unused: only
		// the document is kept.
		_, doc := routes.OpenAPI{Config: cfg.OpenAPIConfig}.InstallV2(g.Handler.GoRestfulContainer, mux.NewPathRecorderMux("openapi-v2"))
		return withoutGatedPaths(doc), "built-in", nil
	}))
	g.OpenAPIVersionedService = handler.NewOpenAPIServiceLazy(v2)
	g.OpenAPIVersionedService.RegisterOpenAPIVersionedService("/openapi/v2", g.Handler.NonGoRestfulMux)
}

// withoutGatedPaths returns doc without the paths of the gated core groups
// (hideGatedAPIs).
func withoutGatedPaths(doc *spec.Swagger) *spec.Swagger {
	if doc == nil || doc.Paths == nil {
		return doc
	}
	hidden := gatedGroups()
	out := *doc
	paths := *doc.Paths
	paths.Paths = make(map[string]spec.PathItem, len(doc.Paths.Paths))
	for p, item := range doc.Paths.Paths {
		if !hiddenPath(p, hidden) {
			paths.Paths[p] = item
		}
	}
	out.Paths = &paths
	return &out
}
