package storage

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ContentRange is the keys of one resource in one logical cluster, as
// ClusterPrefix lays them out.
type ContentRange struct {
	// Resource is the resource stored under Prefix.
	Resource schema.GroupResource
	// Prefix is the full key prefix, ClusterPrefix(root, resourcePrefix,
	// cluster).
	Prefix string
	// Values asks ScanContent to read the values of the range and hand
	// them to its visitor; without it only the keys are read.
	Values bool
}

// Limits of a content scan and of the deletion that follows it. etcd
// refuses transactions of more than 128 operations (or comparisons) by
// default; the key bound keeps one transaction from holding etcd's write
// lock for long on a large cluster. Variables for tests.
var (
	scanPage int64 = 500
	txnOps         = 100
	txnKeys        = 10000
)

// ContentScan is what ScanContent saw: every key of its ranges at one etcd
// revision, in spans of at most txnKeys keys.
type ContentScan struct {
	// Revision is the etcd revision the scan read at.
	Revision int64
	// Keys is the number of keys seen.
	Keys  int
	spans []keySpan
}

// keySpan is the keys in [start, end) as of the scan's revision.
type keySpan struct {
	start, end string
	keys       int
}

// ScanContent reads every key of ranges at one etcd revision: the first
// page of up to txnOps ranges per transaction (the first transaction fixes
// the revision), further pages at that revision. It calls visit (if not
// nil) with the index of the range, the key and the stored value of every
// key of a range that asks for Values. An error of visit ends the scan.
func ScanContent(ctx context.Context, kv clientv3.KV, ranges []ContentRange, visit func(i int, key, value []byte) error) (*ContentScan, error) {
	scan := &ContentScan{}
	for start := 0; start < len(ranges); start += txnOps {
		chunk := ranges[start:min(start+txnOps, len(ranges))]
		ops := make([]clientv3.Op, 0, len(chunk))
		for _, r := range chunk {
			ops = append(ops, clientv3.OpGet(r.Prefix, scan.getOptions(r, PrefixEnd(r.Prefix))...))
		}
		resp, err := kv.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, fmt.Errorf("reading %d key ranges from %s: %w", len(chunk), chunk[0].Prefix, err)
		}
		if scan.Revision == 0 {
			scan.Revision = resp.Header.Revision
		}
		for j, op := range resp.Responses {
			i := start + j
			page := op.GetResponseRange()
			if page == nil {
				return nil, fmt.Errorf("reading %s: no range response", ranges[i].Prefix)
			}
			if err := scan.addRange(ctx, kv, ranges[i], i, page.Kvs, page.More, visit); err != nil {
				return nil, err
			}
		}
	}
	return scan, nil
}

// getOptions are the options of a page of r ending before end.
func (scan *ContentScan) getOptions(r ContentRange, end string) []clientv3.OpOption {
	opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(scanPage)}
	if !r.Values {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if scan.Revision != 0 {
		opts = append(opts, clientv3.WithRev(scan.Revision))
	}
	return opts
}

// addRange records range r from its first page, reading further pages
// while there are more, and cuts it into spans of at most txnKeys keys.
func (scan *ContentScan) addRange(ctx context.Context, kv clientv3.KV, r ContentRange, i int, kvs []*mvccpb.KeyValue, more bool, visit func(int, []byte, []byte) error) error {
	end := PrefixEnd(r.Prefix)
	span := keySpan{start: r.Prefix, end: end}
	for {
		for _, item := range kvs {
			if span.keys == txnKeys {
				span.end = string(item.Key)
				scan.spans = append(scan.spans, span)
				span = keySpan{start: string(item.Key), end: end}
			}
			span.keys++
			scan.Keys++
			if visit != nil && r.Values {
				if err := visit(i, item.Key, item.Value); err != nil {
					return err
				}
			}
		}
		if !more || len(kvs) == 0 {
			break
		}
		next := string(kvs[len(kvs)-1].Key) + "\x00"
		resp, err := kv.Get(ctx, next, scan.getOptions(r, end)...)
		if err != nil {
			return fmt.Errorf("reading %s: %w", r.Prefix, err)
		}
		kvs, more = resp.Kvs, resp.More
	}
	if span.keys > 0 {
		scan.spans = append(scan.spans, span)
	}
	return nil
}

// DeleteScanned deletes the keys scan saw, in transactions of at most
// txnOps spans and about txnKeys keys. Each transaction deletes its spans
// only if no key in them was written after the scan's revision, so nothing
// is deleted that the scan did not see (and its caller did not judge). It
// returns how many keys went and whether all spans went; false means that
// something changed meanwhile and the content should be scanned again.
func DeleteScanned(ctx context.Context, kv clientv3.KV, scan *ContentScan) (int64, bool, error) {
	var deleted int64
	for start := 0; start < len(scan.spans); {
		end, keys := start, 0
		for end < len(scan.spans) && end-start < txnOps && (end == start || keys+scan.spans[end].keys <= txnKeys) {
			keys += scan.spans[end].keys
			end++
		}
		cmps := make([]clientv3.Cmp, 0, end-start)
		ops := make([]clientv3.Op, 0, end-start)
		for _, s := range scan.spans[start:end] {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.start).WithRange(s.end), "<", scan.Revision+1))
			ops = append(ops, clientv3.OpDelete(s.start, clientv3.WithRange(s.end)))
		}
		resp, err := kv.Txn(ctx).If(cmps...).Then(ops...).Commit()
		if err != nil {
			return deleted, false, fmt.Errorf("deleting %d key ranges from %s: %w", end-start, scan.spans[start].start, err)
		}
		if !resp.Succeeded {
			return deleted, false, nil
		}
		for _, r := range resp.Responses {
			if d := r.GetResponseDeleteRange(); d != nil {
				deleted += d.Deleted
			}
		}
		start = end
	}
	return deleted, true, nil
}
