package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
)

// encryption loads the EncryptionConfiguration at path, as kube-apiserver's
// --encryption-provider-config does: per-resource transformers for the
// shard's stores, built-in and custom resources alike, and the health
// checks of its KMS plugins, added to /healthz and /readyz. No path means
// no encryption (nil). KMS connections live until the server has drained
// its requests.
func encryption(path string, gc *genericapiserver.RecommendedConfig) (value.ResourceTransformers, error) {
	if path == "" {
		return nil, nil
	}
	ctx := wait.ContextForChannel(gc.DrainedNotify())
	c, err := encryptionconfig.LoadEncryptionConfig(ctx, path, false, gc.APIServerID)
	if err != nil {
		return nil, fmt.Errorf("--encryption-provider-config %s: %w", path, err)
	}
	gc.HealthzChecks = append(gc.HealthzChecks, c.HealthChecks...)
	gc.ReadyzChecks = append(gc.ReadyzChecks, c.HealthChecks...)
	transformers := encryptionconfig.StaticTransformers(c.Transformers)
	gc.ResourceTransformers = transformers
	return transformers, nil
}
