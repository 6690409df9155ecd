package informers

import (
	"errors"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// NewUnion returns an informer that reads local first and then remote, for
// consumers that look objects up wherever they are: a shard's own
// APIExports and those the cache server replicates from other shards.
// Objects of remote for which skip returns true (the replicas of local's
// own objects) are invisible. Keys of the two sides must not collide but
// through skipped objects; a key found locally hides a remote one.
//
// The union has synced when local has: remote is read when it is there,
// so that a remote side that cannot be reached (a cache server that is
// down) holds up nothing but the lookups that need it.
//
// Only reading, event handlers and indexers are supported: the union does
// not run, and its store cannot be written. Run local and remote as usual.
func NewUnion[T runtime.Object](local, remote Informer[T], resource schema.GroupResource, skip func(obj any) bool) Informer[T] {
	u := &unionInformer{SharedIndexInformer: local.Informer(), remote: remote.Informer(), skip: skip}
	u.indexer = &unionIndexer{local: local.Informer().GetIndexer(), remote: remote.Informer().GetIndexer(), skip: skip}
	return NewInformer[T](u, resource)
}

type unionInformer struct {
	cache.SharedIndexInformer
	remote  cache.SharedIndexInformer
	indexer *unionIndexer
	skip    func(any) bool
}

func (u *unionInformer) GetIndexer() cache.Indexer { return u.indexer }
func (u *unionInformer) GetStore() cache.Store     { return u.indexer }

// AddIndexers adds to each side the indexers it does not have yet.
func (u *unionInformer) AddIndexers(indexers cache.Indexers) error {
	return u.indexer.AddIndexers(indexers)
}

func (u *unionInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	local, err := u.SharedIndexInformer.AddEventHandler(handler)
	if err != nil {
		return nil, err
	}
	remote, err := u.remote.AddEventHandler(skipHandler{handler, u.skip})
	if err != nil {
		return nil, err
	}
	return unionRegistration{local, remote}, nil
}

func (u *unionInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, _ time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return u.AddEventHandler(handler)
}

func (u *unionInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	local, err := u.SharedIndexInformer.AddEventHandlerWithOptions(handler, options)
	if err != nil {
		return nil, err
	}
	remote, err := u.remote.AddEventHandlerWithOptions(skipHandler{handler, u.skip}, options)
	if err != nil {
		return nil, err
	}
	return unionRegistration{local, remote}, nil
}

func (u *unionInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(unionRegistration)
	if !ok {
		return errors.New("informers: not a registration of this union")
	}
	return errors.Join(u.SharedIndexInformer.RemoveEventHandler(r.local), u.remote.RemoveEventHandler(r.remote))
}

// skipHandler drops the events of skipped objects.
type skipHandler struct {
	cache.ResourceEventHandler
	skip func(any) bool
}

func (h skipHandler) OnAdd(obj any, initial bool) {
	if !h.skip(obj) {
		h.ResourceEventHandler.OnAdd(obj, initial)
	}
}

func (h skipHandler) OnUpdate(oldObj, obj any) {
	if !h.skip(obj) {
		h.ResourceEventHandler.OnUpdate(oldObj, obj)
	}
}

func (h skipHandler) OnDelete(obj any) {
	o := obj
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok && tomb.Obj != nil {
		o = tomb.Obj
	}
	if !h.skip(o) {
		h.ResourceEventHandler.OnDelete(obj)
	}
}

type unionRegistration struct {
	local, remote cache.ResourceEventHandlerRegistration
}

func (r unionRegistration) HasSynced() bool                     { return r.local.HasSynced() }
func (r unionRegistration) HasSyncedChecker() cache.DoneChecker { return r.local.HasSyncedChecker() }

// unionIndexer reads local, then remote without skipped objects.
type unionIndexer struct {
	local, remote cache.Indexer
	skip          func(any) bool
}

var errReadOnly = errors.New("informers: a union's store is read-only")

func (u *unionIndexer) Add(any) error               { return errReadOnly }
func (u *unionIndexer) Update(any) error            { return errReadOnly }
func (u *unionIndexer) Delete(any) error            { return errReadOnly }
func (u *unionIndexer) Replace([]any, string) error { return errReadOnly }
func (u *unionIndexer) Resync() error               { return nil }
func (u *unionIndexer) Bookmark(string)             {}
func (u *unionIndexer) LastStoreSyncResourceVersion() string {
	return u.local.LastStoreSyncResourceVersion()
}
func (u *unionIndexer) GetIndexers() cache.Indexers { return u.local.GetIndexers() }

// AddIndexers adds to each side the indexers it does not have yet.
func (u *unionIndexer) AddIndexers(indexers cache.Indexers) error {
	return errors.Join(addMissing(u.local, indexers), addMissing(u.remote, indexers))
}

func addMissing(indexer cache.Indexer, indexers cache.Indexers) error {
	existing := indexer.GetIndexers()
	missing := cache.Indexers{}
	for name, fn := range indexers {
		if _, ok := existing[name]; !ok {
			missing[name] = fn
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return indexer.AddIndexers(missing)
}

func (u *unionIndexer) visible(objs []any) []any {
	return slices.DeleteFunc(objs, u.skip)
}

func (u *unionIndexer) List() []any {
	return append(u.local.List(), u.visible(u.remote.List())...)
}

func (u *unionIndexer) ListKeys() []string {
	keys := u.local.ListKeys()
	for _, o := range u.visible(u.remote.List()) {
		if k, err := KeyFunc(o); err == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

func (u *unionIndexer) Get(obj any) (any, bool, error) {
	key, err := KeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return u.GetByKey(key)
}

func (u *unionIndexer) GetByKey(key string) (any, bool, error) {
	if obj, ok, err := u.local.GetByKey(key); ok || err != nil {
		return obj, ok, err
	}
	obj, ok, err := u.remote.GetByKey(key)
	if !ok || err != nil || u.skip(obj) {
		return nil, false, err
	}
	return obj, true, nil
}

func (u *unionIndexer) Index(indexName string, obj any) ([]any, error) {
	local, err := u.local.Index(indexName, obj)
	if err != nil {
		return nil, err
	}
	remote, err := u.remote.Index(indexName, obj)
	if err != nil {
		return nil, err
	}
	return append(local, u.visible(remote)...), nil
}

func (u *unionIndexer) IndexKeys(indexName, value string) ([]string, error) {
	objs, err := u.ByIndex(indexName, value)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		if k, err := KeyFunc(o); err == nil {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func (u *unionIndexer) ListIndexFuncValues(indexName string) []string {
	values := u.local.ListIndexFuncValues(indexName)
	for _, v := range u.remote.ListIndexFuncValues(indexName) {
		if objs, _ := u.remote.ByIndex(indexName, v); len(u.visible(objs)) > 0 && !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	return values
}

func (u *unionIndexer) ByIndex(indexName, value string) ([]any, error) {
	local, err := u.local.ByIndex(indexName, value)
	if err != nil {
		return nil, err
	}
	remote, err := u.remote.ByIndex(indexName, value)
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(local), u.visible(slices.Clone(remote))...), nil
}
