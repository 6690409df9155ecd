// Package objectlimit limits the number of objects a logical cluster may
// hold, as kcp's LogicalClusterObjectCountLimit admission plugin does: a
// shard-wide default (--logical-cluster-total-object-limit) that the
// core.kcp.io/max-total-objects annotation of a LogicalCluster overrides
// (only shard admins may change LogicalClusters).
//
// The count is eventually consistent by design: a scanner counts each
// cluster's keys in etcd (keys only) every scan interval, and the plugin
// adds the creates and subtracts the deletes it admits in between. A
// create that would reach beyond the limit gets 403; deletes, updates,
// subresources and events are never refused, nor is anything in a
// cluster that is not Ready yet, or in root and system clusters under the
// default. Nothing is slowed: admission reads two maps.
package objectlimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/storage"
)

const (
	// PluginName is kcp's name of the plugin.
	PluginName = "core.kcp.io/LogicalClusterObjectCountLimit"
	// LimitAnnotation on a LogicalCluster overrides the shard's default;
	// zero or less lifts the limit.
	LimitAnnotation = "core.kcp.io/max-total-objects"
	// DefaultScanInterval is how often the scanner recounts.
	DefaultScanInterval = time.Minute
	// scanPage is the number of keys read from etcd at once.
	scanPage = 10000
)

// Config configures the plugin.
type Config struct {
	// DefaultLimit applies to clusters without the annotation, except
	// root and system clusters; zero or less disables it.
	DefaultLimit int64
	// LogicalClusters is the shard's LogicalCluster informer.
	LogicalClusters informers.Informer[*v1alpha1.LogicalCluster]
	// KV is the shard's etcd; Root its key prefix (e.g. /registry).
	KV   clientv3.KV
	Root string
	// Prefixes returns the resource prefixes to count, below Root.
	Prefixes     func() []string
	ScanInterval time.Duration
	// AfterScan, if set, is given the objects of every logical cluster
	// with keys after each scan.
	AfterScan func(ctx context.Context, counts map[logicalcluster.Name]int64)
}

// Plugin is the admission plugin and its scanner.
type Plugin struct {
	*admission.Handler
	cfg Config

	// scanned holds the counts of the last scan.
	scanned atomic.Pointer[map[logicalcluster.Name]int64]
	// scannedLarge holds, per resource prefix, the clusters with at least
	// LargeCount objects of it at the last scan.
	scannedLarge atomic.Pointer[map[string]map[logicalcluster.Name]int64]
	// admitted holds, per cluster, creates minus deletes admitted since
	// the last scan began (*atomic.Int64); during a scan, beforeScan holds
	// those admitted before it began, which count until its result
	// replaces the last one (else a scan in progress would forget them).
	mu         sync.RWMutex
	admitted   map[logicalcluster.Name]*atomic.Int64
	beforeScan map[logicalcluster.Name]*atomic.Int64
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin; Run its scanner.
func New(cfg Config) (*Plugin, error) {
	if cfg.LogicalClusters.Informer() == nil || cfg.KV == nil || cfg.Prefixes == nil {
		return nil, errors.New(PluginName + ": missing dependencies")
	}
	if cfg.ScanInterval <= 0 {
		cfg.ScanInterval = DefaultScanInterval
	}
	p := &Plugin{
		Handler:  admission.NewHandler(admission.Create, admission.Delete),
		cfg:      cfg,
		admitted: map[logicalcluster.Name]*atomic.Int64{},
	}
	p.scanned.Store(&map[logicalcluster.Name]int64{})
	p.scannedLarge.Store(&map[string]map[logicalcluster.Name]int64{})
	return p, nil
}

// Name names the scanner among the shard's controllers.
func (p *Plugin) Name() string { return "tessera-object-count-scanner" }

// Run scans at once and then every scan interval until ctx is done.
func (p *Plugin) Run(ctx context.Context) error {
	for {
		if err := p.Scan(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Counting the objects of logical clusters")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(p.cfg.ScanInterval):
		}
	}
}

// Scan counts the keys of every logical cluster.
func (p *Plugin) Scan(ctx context.Context) error {
	// Deltas admitted from now on are in this scan or not; they count
	// until the next scan either way (an object may count twice until
	// then: the limit errs on the safe side). Those admitted before count
	// until this scan's result is in.
	p.mu.Lock()
	p.beforeScan, p.admitted = p.admitted, map[logicalcluster.Name]*atomic.Int64{}
	p.mu.Unlock()

	counts := map[logicalcluster.Name]int64{}
	large := map[string]map[logicalcluster.Name]int64{}
	root := strings.TrimSuffix(p.cfg.Root, "/")
	for _, prefix := range p.cfg.Prefixes() {
		full := root + prefix
		key := full + "/"
		end := clientv3.GetPrefixRangeEnd(key)
		// Keys are sorted, so the keys of a cluster are consecutive.
		var run logicalcluster.Name
		var runCount int64
		flush := func() {
			if runCount >= LargeCount {
				if large[prefix] == nil {
					large[prefix] = map[logicalcluster.Name]int64{}
				}
				large[prefix][run] = runCount
			}
		}
		for {
			resp, err := p.cfg.KV.Get(ctx, key, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(scanPage))
			if err != nil {
				p.scanFailed()
				return fmt.Errorf("scanning %s: %w", full, err)
			}
			for _, kv := range resp.Kvs {
				cluster, err := storage.ClusterOfKey(full, string(kv.Key))
				if err != nil {
					continue
				}
				counts[cluster]++
				if cluster != run {
					flush()
					run, runCount = cluster, 0
				}
				runCount++
			}
			if !resp.More || len(resp.Kvs) == 0 {
				break
			}
			key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
		flush()
	}
	p.mu.Lock()
	p.scanned.Store(&counts)
	p.beforeScan = nil
	p.mu.Unlock()
	p.scannedLarge.Store(&large)
	if p.cfg.AfterScan != nil {
		p.cfg.AfterScan(ctx, counts)
	}
	return nil
}

// scanFailed keeps counting what was admitted before the failed scan.
func (p *Plugin) scanFailed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for cluster, b := range p.beforeScan {
		d := p.admitted[cluster]
		if d == nil {
			d = &atomic.Int64{}
			p.admitted[cluster] = d
		}
		d.Add(b.Load())
	}
	p.beforeScan = nil
}

// LargeCount is the smallest number of objects of one resource in one
// cluster that ResourceCount reports; smaller counts are not kept.
const LargeCount = 100

// ResourceCount returns the objects under the resource prefix prefix in
// cluster at the last scan, if there were at least LargeCount.
func (p *Plugin) ResourceCount(prefix string, cluster logicalcluster.Name) (int64, bool) {
	n, ok := (*p.scannedLarge.Load())[prefix][cluster]
	return n, ok
}

// Count returns the objects of cluster as the plugin knows them.
func (p *Plugin) Count(cluster logicalcluster.Name) int64 {
	p.mu.RLock()
	n := (*p.scanned.Load())[cluster]
	d, b := p.admitted[cluster], p.beforeScan[cluster]
	p.mu.RUnlock()
	if d != nil {
		n += d.Load()
	}
	if b != nil {
		n += b.Load()
	}
	return n
}

func (p *Plugin) add(cluster logicalcluster.Name, delta int64) {
	p.mu.RLock()
	d := p.admitted[cluster]
	p.mu.RUnlock()
	if d == nil {
		p.mu.Lock()
		if d = p.admitted[cluster]; d == nil {
			d = &atomic.Int64{}
			p.admitted[cluster] = d
		}
		p.mu.Unlock()
	}
	d.Add(delta)
}

// limit returns the limit of cluster, zero or less if none applies.
func (p *Plugin) limit(cluster logicalcluster.Name) (limit int64, fromAnnotation bool) {
	lc, err := p.cfg.LogicalClusters.Lister().Cluster(cluster).Get(v1alpha1.LogicalClusterName)
	if err != nil {
		return 0, false
	}
	if lc.Status.Phase != v1alpha1.LogicalClusterPhaseReady {
		return 0, false
	}
	if v, ok := lc.GetAnnotations()[LimitAnnotation]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		return n, true
	}
	if cluster == "root" || cluster.IsSystem() {
		return 0, false
	}
	return p.cfg.DefaultLimit, false
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" || a.GetResource().GroupResource().Resource == "events" {
		return nil
	}
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard {
		return nil
	}
	limit, fromAnnotation := p.limit(c.Name)
	if limit <= 0 {
		return nil
	}
	if a.GetOperation() == admission.Delete {
		p.add(c.Name, -1)
		return nil
	}
	if p.Count(c.Name) >= limit {
		return p.refuse(a, c, limit, fromAnnotation)
	}
	if !a.IsDryRun() {
		p.add(c.Name, 1)
	}
	return nil
}

func (p *Plugin) refuse(a admission.Attributes, c logicalcluster.Cluster, limit int64, fromAnnotation bool) error {
	source := "the shard's default (--logical-cluster-total-object-limit)"
	if fromAnnotation {
		source = "its " + LimitAnnotation + " annotation"
	}
	return admission.NewForbidden(a, fmt.Errorf("logical cluster %s has reached its limit of %d objects, set by %s", c.String(), limit, source))
}
