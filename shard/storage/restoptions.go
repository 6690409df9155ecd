package storage

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// Media types used to encode objects in etcd.
const (
	ProtobufMediaType = runtime.ContentTypeProtobuf
	JSONMediaType     = runtime.ContentTypeJSON
)

// RESTOptionsGetter hands every registry of the shard its storage: one etcd3
// store per resource, shared by all logical clusters, with the cluster-aware
// decorator and (when Cached) one watch cache per resource.
type RESTOptionsGetter struct {
	Backend storagebackend.Config
	Scheme  *runtime.Scheme
	Codecs  serializer.CodecFactory
	Cached  bool
	// Prefixes overrides the resource prefix ("<group>/<resource>" by
	// default, "<resource>" for the core group).
	Prefixes map[schema.GroupResource]string
	// StorageVersions overrides the version objects are encoded in.
	StorageVersions map[schema.GroupResource]schema.GroupVersion
	// Transformers encrypt values at rest, per resource (from
	// --encryption-provider-config); nil stores them as they are.
	Transformers value.ResourceTransformers

	mu     sync.Mutex
	served map[string]schema.GroupResource
}

var _ generic.RESTOptionsGetter = &RESTOptionsGetter{}

// protobufMarshaler is implemented by the k8s.io/api types.
type protobufMarshaler interface {
	ProtoMessage()
}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g *RESTOptionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	storageVersion, ok := g.StorageVersions[resource]
	if !ok {
		versions := g.Scheme.PrioritizedVersionsForGroup(resource.Group)
		if len(versions) == 0 {
			return generic.RESTOptions{}, fmt.Errorf("no version of group %q is registered", resource.Group)
		}
		storageVersion = versions[0]
	}
	mediaType := JSONMediaType
	if _, ok := example.(protobufMarshaler); ok {
		mediaType = ProtobufMediaType
	}
	codec, encodeVersioner, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  mediaType,
		StorageSerializer: g.Codecs,
		StorageVersion:    storageVersion,
		MemoryVersion:     schema.GroupVersion{Group: storageVersion.Group, Version: runtime.APIVersionInternal},
		Config:            g.Backend,
	})
	if err != nil {
		return generic.RESTOptions{}, fmt.Errorf("building the storage codec for %s: %w", resource, err)
	}
	prefix := g.prefix(resource)
	g.mu.Lock()
	if g.served == nil {
		g.served = map[string]schema.GroupResource{}
	}
	g.served[prefix] = resource
	g.mu.Unlock()
	cfg := g.Backend.ForResource(resource)
	cfg.Codec = codec
	cfg.EncodeVersioner = encodeVersioner
	cfg.Transformer = g.Transformer(resource)
	return generic.RESTOptions{
		StorageConfig:           cfg,
		Decorator:               Decorator(g.Cached),
		EnableGarbageCollection: true,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          prefix,
	}, nil
}

// Transformer returns the transformer values of resource go through on
// their way to and from etcd: the configured one, or identity.
func (g *RESTOptionsGetter) Transformer(resource schema.GroupResource) value.Transformer {
	if g.Transformers == nil {
		return identity.NewEncryptCheckTransformer()
	}
	return g.Transformers.TransformerForResource(resource)
}

// StoredResources returns the resource of every store built so far, by
// resource prefix.
func (g *RESTOptionsGetter) StoredResources() map[string]schema.GroupResource {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]schema.GroupResource, len(g.served))
	for p, r := range g.served {
		out[p] = r
	}
	return out
}

// ResourcePrefixes returns the resource prefixes of every store built so far.
func (g *RESTOptionsGetter) ResourcePrefixes() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.served))
	for p := range g.served {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// PrefixOf returns the resource prefix of resource, below the storage
// prefix.
func (g *RESTOptionsGetter) PrefixOf(resource schema.GroupResource) string {
	return g.prefix(resource)
}

func (g *RESTOptionsGetter) prefix(resource schema.GroupResource) string {
	if p, ok := g.Prefixes[resource]; ok {
		return p
	}
	return ResourcePrefix(resource)
}

// ResourcePrefix is the default etcd prefix of a resource, below the
// storage prefix (/registry): "<group>/<resource>", or "<resource>" for the
// core group, as Kubernetes lays them out.
func ResourcePrefix(resource schema.GroupResource) string {
	if resource.Group == "" {
		return "/" + resource.Resource
	}
	return "/" + strings.Join([]string{resource.Group, resource.Resource}, "/")
}
