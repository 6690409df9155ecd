package storage

import (
	"context"
	goerrors "errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// scoped rewrites registry keys into cluster-aware keys, using the cluster of
// the request context.
type scoped struct {
	storage.Interface
	prefix string
}

var _ storage.Interface = &scoped{}

// key returns the cluster-aware key for a request that addresses one object
// or one cluster. Wildcard requests may only read whole prefixes.
func (s *scoped) key(ctx context.Context, key string) (string, error) {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok {
		return "", errors.NewInternalError(fmt.Errorf("no logical cluster in the request context for key %q", key))
	}
	if c.Wildcard {
		return "", errors.NewBadRequest("only list and watch are allowed across all logical clusters")
	}
	return clusterKey(s.prefix, c.Name, key)
}

func (s *scoped) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	k, err := s.key(ctx, key)
	if err != nil {
		return err
	}
	err = s.Interface.Create(ctx, k, obj, out, ttl)
	if goerrors.Is(err, storage.ErrResourceVersionSetOnCreate) {
		// The client's mistake: upstream answers 500 Internal Error.
		return errors.NewBadRequest(err.Error())
	}
	return err
}

func (s *scoped) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	k, err := s.key(ctx, key)
	if err != nil {
		return err
	}
	return s.Interface.Delete(ctx, k, out, preconditions, validateDeletion, cachedExistingObject, opts)
}

// listKey is key for lists and watches. Across all clusters it is always
// the bare prefix, read recursively: the registry narrows a list by a
// metadata.name or metadata.namespace field selector to a key, which has
// no meaning without a cluster; the predicate still carries the selector.
func (s *scoped) listKey(ctx context.Context, key string, opts *storage.ListOptions) (string, error) {
	if c, ok := logicalcluster.ClusterFrom(ctx); ok && c.Wildcard {
		opts.Recursive = true
		return s.prefix, nil
	}
	return s.key(ctx, key)
}

func (s *scoped) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	k, err := s.listKey(ctx, key, &opts)
	if err != nil {
		return nil, err
	}
	opts.Predicate = clusterWatchPredicate(ctx, withoutIndexes(opts.Predicate))
	return s.Interface.Watch(ctx, k, opts)
}

func (s *scoped) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	k, err := s.key(ctx, key)
	if err != nil {
		return err
	}
	return s.Interface.Get(ctx, k, opts, objPtr)
}

func (s *scoped) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	k, err := s.listKey(ctx, key, &opts)
	if err != nil {
		return err
	}
	opts.Predicate = withoutIndexes(opts.Predicate)
	return s.Interface.GetList(ctx, k, opts, listObj)
}

func (s *scoped) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	k, err := s.key(ctx, key)
	if err != nil {
		return err
	}
	return s.Interface.GuaranteedUpdate(ctx, k, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject)
}

// withoutIndexes drops watch-cache index hints: an index lookup in the watch
// cache skips the key-prefix filter and would return objects of every
// cluster. The prefix scan is already O(objects in the cluster).
func withoutIndexes(p storage.SelectionPredicate) storage.SelectionPredicate {
	p.IndexFields = nil
	p.IndexLabels = nil
	return p
}
