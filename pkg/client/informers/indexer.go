package informers

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgofeaturegate "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
)

// NewIndexer returns a cache.Indexer that behaves as client-go's
// cache.NewIndexer and holds its indexes in less memory.
//
// client-go keeps, for every index value, a set (a Go map) of the keys
// with that value. Most values of the shard's indexes belong to one object
// only (its logical cluster, its cluster and namespace, its path, its UID),
// and an empty map with one key costs about 200 bytes. Here a value with
// one key holds that key inline; a set is made only for a value shared by
// several objects, and dropped again when one is left.
//
// metrics, if not nil, receives the resourceVersion of the last change, as
// client-go's store metric does.
func NewIndexer(keyFunc cache.KeyFunc, indexers cache.Indexers, metrics cache.GaugeMetric) cache.Indexer {
	if indexers == nil {
		indexers = cache.Indexers{}
	}
	x := &indexer{
		keyFunc:  keyFunc,
		items:    map[string]any{},
		indexers: indexers,
		indices:  map[string]map[string]keys{},
		metric:   metrics,
	}
	for name := range indexers {
		x.indices[name] = map[string]keys{}
	}
	return x
}

// keys are the keys of one index value: one, or several in many.
type keys struct {
	one  string
	many map[string]struct{}
}

func (k keys) len() int {
	if k.many != nil {
		return len(k.many)
	}
	return 1
}

func (k keys) each(f func(string)) {
	if k.many == nil {
		f(k.one)
		return
	}
	for key := range k.many {
		f(key)
	}
}

func (k keys) with(key string) keys {
	switch {
	case k.many != nil:
		k.many[key] = struct{}{}
	case k.one != key:
		k = keys{many: map[string]struct{}{k.one: {}, key: {}}}
	}
	return k
}

// without returns k without key and whether any key is left.
func (k keys) without(key string) (keys, bool) {
	if k.many == nil {
		return k, k.one != key
	}
	delete(k.many, key)
	if len(k.many) == 1 {
		for last := range k.many {
			return keys{one: last}, true
		}
	}
	return k, len(k.many) > 0
}

type indexer struct {
	keyFunc cache.KeyFunc
	metric  cache.GaugeMetric

	lock     sync.RWMutex
	items    map[string]any
	indexers cache.Indexers
	indices  map[string]map[string]keys
	rv       string
}

var _ cache.Indexer = &indexer{}

func (x *indexer) Add(obj any) error { return x.Update(obj) }

func (x *indexer) Update(obj any) error {
	key, err := x.keyFunc(obj)
	if err != nil {
		return cache.KeyError{Obj: obj, Err: err}
	}
	rv, rvErr := resourceVersionOf(obj)
	x.lock.Lock()
	defer x.lock.Unlock()
	old := x.items[key]
	x.items[key] = obj
	x.reindex(old, obj, key)
	if rvErr == nil {
		x.setResourceVersion(rv)
	}
	return nil
}

func (x *indexer) Delete(obj any) error {
	key, err := x.keyFunc(obj)
	if err != nil {
		return cache.KeyError{Obj: obj, Err: err}
	}
	rv, rvErr := resourceVersionOf(obj)
	x.lock.Lock()
	defer x.lock.Unlock()
	if old, ok := x.items[key]; ok {
		x.reindex(old, nil, key)
		delete(x.items, key)
	}
	if rvErr == nil {
		x.setResourceVersion(rv)
	}
	return nil
}

func (x *indexer) List() []any {
	x.lock.RLock()
	defer x.lock.RUnlock()
	return slices.AppendSeq(make([]any, 0, len(x.items)), maps.Values(x.items))
}

func (x *indexer) ListKeys() []string {
	x.lock.RLock()
	defer x.lock.RUnlock()
	return slices.AppendSeq(make([]string, 0, len(x.items)), maps.Keys(x.items))
}

func (x *indexer) Get(obj any) (any, bool, error) {
	key, err := x.keyFunc(obj)
	if err != nil {
		return nil, false, cache.KeyError{Obj: obj, Err: err}
	}
	return x.GetByKey(key)
}

func (x *indexer) GetByKey(key string) (any, bool, error) {
	x.lock.RLock()
	defer x.lock.RUnlock()
	item, ok := x.items[key]
	return item, ok, nil
}

func (x *indexer) Replace(list []any, resourceVersion string) error {
	items := make(map[string]any, len(list))
	for _, item := range list {
		key, err := x.keyFunc(item)
		if err != nil {
			return cache.KeyError{Obj: item, Err: err}
		}
		items[key] = item
	}
	x.lock.Lock()
	defer x.lock.Unlock()
	x.items = items
	for name := range x.indexers {
		x.indices[name] = map[string]keys{}
	}
	for key, item := range items {
		x.reindex(nil, item, key)
	}
	x.setResourceVersion(resourceVersion)
	return nil
}

func (x *indexer) Resync() error { return nil }

// LastStoreSyncResourceVersion is, as client-go's, empty unless the
// AtomicFIFO feature of client-go is on.
func (x *indexer) LastStoreSyncResourceVersion() string {
	if !clientgofeaturegate.FeatureGates().Enabled(clientgofeaturegate.AtomicFIFO) {
		return ""
	}
	x.lock.RLock()
	defer x.lock.RUnlock()
	return x.rv
}

func (x *indexer) Bookmark(rv string) {
	x.lock.Lock()
	defer x.lock.Unlock()
	x.setResourceVersion(rv)
}

func (x *indexer) Index(indexName string, obj any) ([]any, error) {
	x.lock.RLock()
	defer x.lock.RUnlock()
	indexFunc := x.indexers[indexName]
	if indexFunc == nil {
		return nil, fmt.Errorf("Index with name %s does not exist", indexName)
	}
	values, err := indexFunc(obj)
	if err != nil {
		return nil, err
	}
	index := x.indices[indexName]
	if len(values) == 1 {
		k, ok := index[values[0]]
		if !ok {
			return []any{}, nil
		}
		return x.itemsOf(k), nil
	}
	seen := map[string]struct{}{}
	var list []any
	for _, v := range values {
		if k, ok := index[v]; ok {
			k.each(func(key string) {
				if _, dup := seen[key]; !dup {
					seen[key] = struct{}{}
					list = append(list, x.items[key])
				}
			})
		}
	}
	if list == nil {
		list = []any{}
	}
	return list, nil
}

// itemsOf returns the items of k.
func (x *indexer) itemsOf(k keys) []any {
	list := make([]any, 0, k.len())
	k.each(func(key string) { list = append(list, x.items[key]) })
	return list
}

func (x *indexer) ByIndex(indexName, indexedValue string) ([]any, error) {
	x.lock.RLock()
	defer x.lock.RUnlock()
	k, err := x.keysOf(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	return x.itemsOf(k), nil
}

// IndexKeys returns the keys sorted, as client-go's does.
func (x *indexer) IndexKeys(indexName, indexedValue string) ([]string, error) {
	x.lock.RLock()
	defer x.lock.RUnlock()
	k, err := x.keysOf(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	list := make([]string, 0, k.len())
	k.each(func(key string) { list = append(list, key) })
	slices.Sort(list)
	return list, nil
}

// noKeys are the keys of a value no object has. Only read, never given to
// with or without.
var noKeys = keys{many: map[string]struct{}{}}

// keysOf returns the keys of an index value, to be read only. The lock is
// held.
func (x *indexer) keysOf(indexName, indexedValue string) (keys, error) {
	if x.indexers[indexName] == nil {
		return keys{}, fmt.Errorf("Index with name %s does not exist", indexName)
	}
	if k, ok := x.indices[indexName][indexedValue]; ok {
		return k, nil
	}
	return noKeys, nil
}

func (x *indexer) ListIndexFuncValues(indexName string) []string {
	x.lock.RLock()
	defer x.lock.RUnlock()
	index := x.indices[indexName]
	return slices.AppendSeq(make([]string, 0, len(index)), maps.Keys(index))
}

func (x *indexer) GetIndexers() cache.Indexers { return x.indexers }

// AddIndexers adds indexers, also after items were added, as client-go's
// does; a name that is already taken is a conflict.
func (x *indexer) AddIndexers(newIndexers cache.Indexers) error {
	x.lock.Lock()
	defer x.lock.Unlock()
	conflicts := sets.KeySet(x.indexers).Intersection(sets.KeySet(newIndexers))
	if conflicts.Len() > 0 {
		return fmt.Errorf("indexer conflict: %v", conflicts)
	}
	for name, f := range newIndexers {
		x.indexers[name] = f
		x.indices[name] = map[string]keys{}
	}
	for key, item := range x.items {
		for name := range newIndexers {
			x.reindexOne(name, nil, item, key)
		}
	}
	return nil
}

// reindex moves key from the index values of old to those of obj (either
// may be nil). The lock is held.
func (x *indexer) reindex(old, obj any, key string) {
	for name := range x.indexers {
		x.reindexOne(name, old, obj, key)
	}
}

// reindexOne is reindex for one index. An index function that fails
// panics, as in client-go: the store cannot be kept consistent.
func (x *indexer) reindexOne(name string, old, obj any, key string) {
	f := x.indexers[name]
	var before, after []string
	var err error
	if old != nil {
		if before, err = f(old); err != nil {
			panic(fmt.Errorf("unable to calculate an index entry for key %q on index %q: %w", key, name, err))
		}
	}
	if obj != nil {
		if after, err = f(obj); err != nil {
			panic(fmt.Errorf("unable to calculate an index entry for key %q on index %q: %w", key, name, err))
		}
	}
	if len(before) == 1 && len(after) == 1 && before[0] == after[0] {
		return
	}
	index := x.indices[name]
	for _, v := range before {
		if k, ok := index[v]; ok {
			if k, left := k.without(key); left {
				index[v] = k
			} else {
				delete(index, v)
			}
		}
	}
	for _, v := range after {
		if k, ok := index[v]; ok {
			index[v] = k.with(key)
		} else {
			index[v] = keys{one: key}
		}
	}
}

// setResourceVersion records rv as the last one seen. The lock is held.
func (x *indexer) setResourceVersion(rv string) {
	x.rv = rv
	if x.metric == nil || rv == "" {
		return
	}
	// As client-go: the last 15 digits, which a float64 holds exactly.
	digits := rv
	if len(digits) > 15 {
		digits = digits[len(digits)-15:]
	}
	if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
		x.metric.Set(float64(n))
	}
}

func resourceVersionOf(obj any) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	return m.GetResourceVersion(), nil
}
