package informers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// NoWatchList returns lw wrapped so that a client-go Reflector never uses
// WatchList (streaming list) for it, whatever the process-wide
// WatchListClient feature gate says.
//
// Since client-go 0.35 the gate is on by default. A Reflector then syncs by
// a watch with sendInitialEvents=true and collects the initial events in a
// temporary store keyed by namespace/name, which on /clusters/* merges
// same-named objects of different logical clusters. NewReflectorWithOptions
// turns WatchList off for a ListerWatcher whose
// IsWatchListSemanticsUnSupported method returns true (see
// k8s.io/client-go/util/watchlist.DoesClientNotSupportWatchListSemantics), and
// the returned value has that method. The decision is per ListerWatcher, so
// nothing global changes and other reflectors of the process keep the gate's
// setting. The informer syncs with a plain (paginated) LIST instead.
func NoWatchList(lw cache.ListerWatcher) cache.ListerWatcher {
	if n, ok := lw.(noWatchList); ok {
		return n
	}
	return noWatchList{lw: cache.ToListerWatcherWithContext(lw)}
}

// noWatchList is a ListerWatcher without WatchList semantics.
type noWatchList struct {
	lw cache.ListerWatcherWithContext
}

var (
	_ cache.ListerWatcher            = noWatchList{}
	_ cache.ListerWatcherWithContext = noWatchList{}
)

// IsWatchListSemanticsUnSupported tells the Reflector not to use WatchList.
func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// List implements cache.Lister.
func (n noWatchList) List(options metav1.ListOptions) (runtime.Object, error) {
	return n.lw.ListWithContext(context.Background(), options)
}

// ListWithContext implements cache.ListerWithContext.
func (n noWatchList) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return n.lw.ListWithContext(ctx, options)
}

// Watch implements cache.Watcher.
func (n noWatchList) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return n.lw.WatchWithContext(context.Background(), options)
}

// WatchWithContext implements cache.WatcherWithContext.
func (n noWatchList) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return n.lw.WatchWithContext(ctx, options)
}
