// Package openapi holds the generated OpenAPI definitions of the types that
// Tessera servers serve: our API groups (pkg/apis) and the upstream built-in
// APIs (core/v1, rbac/v1, apiextensions/v1, ...), with the apimachinery types
// they reference. Regenerate zz_generated.openapi.go with
// hack/update-codegen.sh.
//
// Definitions are keyed by OpenAPI model name, e.g.
// io.k8s.api.core.v1.ConfigMap or io.kcp.core.v1alpha1.LogicalCluster: the
// names runtime.Scheme.ToOpenAPIDefinitionName returns, because every type
// has an OpenAPIModelName method. Use them with the scheme's definition
// namer, which adds the x-kubernetes-group-version-kind extensions:
//
//	namer := openapinamer.NewDefinitionNamer(scheme)
//	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
//	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
package openapi
