package replicated

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	shardstorage "github.com/tessera-dev/tessera/shard/storage"
)

// StoragePrefix is the etcd key prefix of everything the cache server
// stores, so that it can share an etcd with a shard (whose keys are under
// /registry).
const StoragePrefix = "/cache"

// RESTOptionsGetter hands every replicated resource its storage: one etcd3
// store per resource under Backend (whose prefix should be StoragePrefix),
// objects encoded as unstructured JSON, and with WatchCache one upstream
// watch cache per resource in front of it.
type RESTOptionsGetter struct {
	Backend    storagebackend.Config
	WatchCache bool
}

var _ generic.RESTOptionsGetter = &RESTOptionsGetter{}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g *RESTOptionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	cfg := g.Backend.ForResource(resource)
	cfg.Codec = runtime.NewCodec(unstructured.UnstructuredJSONScheme, unstructured.UnstructuredJSONScheme)
	cfg.EncodeVersioner = example.GetObjectKind().GroupVersionKind().GroupVersion()
	cfg.Transformer = identity.NewEncryptCheckTransformer()
	decorator := generic.UndecoratedStorage
	if g.WatchCache {
		decorator = cachingDecorator
	}
	return generic.RESTOptions{
		StorageConfig:           cfg,
		Decorator:               decorator,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          shardstorage.ResourcePrefix(resource),
	}, nil
}
