package discovery

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/lru"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// clusterCache is a bounded, least-recently-used cache of per-cluster
// documents. It is safe for concurrent use.
//
// Cache audit (issue 9): cluster-keyed: the key is the logical cluster name.
type clusterCache[T any] struct {
	lru *lru.Cache
}

func newClusterCache[T any](size int) clusterCache[T] {
	return clusterCache[T]{lru: lru.New(size)}
}

func (c clusterCache[T]) get(cluster logicalcluster.Name) (T, bool) {
	v, ok := c.lru.Get(cluster)
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}

func (c clusterCache[T]) add(cluster logicalcluster.Name, v T) { c.lru.Add(cluster, v) }

func (c clusterCache[T]) remove(cluster logicalcluster.Name) { c.lru.Remove(cluster) }

func (c clusterCache[T]) len() int { return c.lru.Len() }

// fingerprint identifies a set of CRDs: it changes whenever one is added,
// removed, recreated or updated (its resourceVersion changes).
func fingerprint(crds []*apiextensionsv1.CustomResourceDefinition) string {
	keys := make([]string, 0, len(crds))
	for _, crd := range crds {
		if crd != nil {
			keys = append(keys, crd.Name+"\x00"+string(crd.UID)+"\x00"+crd.ResourceVersion)
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sizedDoc is a document that knows how many bytes it holds.
type sizedDoc interface {
	size() int64
}

// sizedClusterCache is a least-recently-used cache of per-cluster documents
// bounded by the number of clusters and by the bytes the documents hold
// together. A document's size may grow after it is added (a second encoding
// made on first use); resize accounts for that. A document larger than the
// whole budget is not kept. It is safe for concurrent use.
//
// Cache audit (issue 9): cluster-keyed: the key is the logical cluster name.
type sizedClusterCache[T sizedDoc] struct {
	maxEntries int
	maxBytes   int64

	mu    sync.Mutex
	bytes int64
	order *list.List // of *sizedEntry[T], most recently used first
	items map[logicalcluster.Name]*list.Element
}

type sizedEntry[T sizedDoc] struct {
	cluster logicalcluster.Name
	doc     T
	// size is what the cache accounts for the document.
	size int64
}

func newSizedClusterCache[T sizedDoc](maxEntries int, maxBytes int64) *sizedClusterCache[T] {
	return &sizedClusterCache[T]{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), items: map[logicalcluster.Name]*list.Element{}}
}

func (c *sizedClusterCache[T]) get(cluster logicalcluster.Name) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[cluster]
	if !ok {
		var zero T
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*sizedEntry[T]).doc, true
}

// add keeps doc for cluster, replacing any document it had, and evicts the
// least recently used documents beyond the bounds. A document larger than
// the whole budget is not kept, and evicts nothing.
func (c *sizedClusterCache[T]) add(cluster logicalcluster.Name, doc T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(cluster)
	entry := &sizedEntry[T]{cluster: cluster, doc: doc, size: doc.size()}
	if entry.size > c.maxBytes {
		return
	}
	c.items[cluster] = c.order.PushFront(entry)
	c.bytes += entry.size
	c.evictLocked()
}

// resize accounts for a new size of doc, if it is still cached for cluster,
// and drops it if it no longer fits the budget at all.
func (c *sizedClusterCache[T]) resize(cluster logicalcluster.Name, doc sizedDoc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[cluster]
	if !ok {
		return
	}
	entry := e.Value.(*sizedEntry[T])
	if sizedDoc(entry.doc) != doc {
		return
	}
	size := doc.size()
	if size > c.maxBytes {
		c.removeLocked(cluster)
		return
	}
	c.bytes += size - entry.size
	entry.size = size
	c.evictLocked()
}

func (c *sizedClusterCache[T]) remove(cluster logicalcluster.Name) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(cluster)
}

func (c *sizedClusterCache[T]) removeLocked(cluster logicalcluster.Name) {
	if e, ok := c.items[cluster]; ok {
		c.order.Remove(e)
		delete(c.items, cluster)
		c.bytes -= e.Value.(*sizedEntry[T]).size
	}
}

// evictLocked drops least recently used documents until both bounds hold.
func (c *sizedClusterCache[T]) evictLocked() {
	for c.order.Len() > 0 && (c.order.Len() > c.maxEntries || c.bytes > c.maxBytes) {
		c.removeLocked(c.order.Back().Value.(*sizedEntry[T]).cluster)
	}
}

// len is the number of cached documents.
func (c *sizedClusterCache[T]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// size is the number of bytes the cached documents hold.
func (c *sizedClusterCache[T]) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
