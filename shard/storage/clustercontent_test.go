package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/etcd/etcdtest"
)

// testEtcd starts an embedded etcd and returns a client of it.
func testEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdtest.Start(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func put(t *testing.T, kv clientv3.KV, keys ...string) {
	t.Helper()
	for start := 0; start < len(keys); start += 100 {
		var ops []clientv3.Op
		for _, k := range keys[start:min(start+100, len(keys))] {
			ops = append(ops, clientv3.OpPut(k, "v:"+k))
		}
		if _, err := kv.Txn(t.Context()).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

func allKeys(t *testing.T, kv clientv3.KV) []string {
	t.Helper()
	resp, err := kv.Get(t.Context(), "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, item := range resp.Kvs {
		keys = append(keys, string(item.Key))
	}
	return keys
}

// contentOf returns the ranges of cluster for two resources.
func contentOf(cluster logicalcluster.Name) []ContentRange {
	return []ContentRange{
		{Resource: schema.GroupResource{Resource: "configmaps"}, Prefix: ClusterPrefix("/registry/", ResourcePrefix(schema.GroupResource{Resource: "configmaps"}), cluster), Values: true},
		{Resource: schema.GroupResource{Group: "example.com", Resource: "gadgets"}, Prefix: ClusterPrefix("/registry", CustomResourcePrefix(schema.GroupResource{Group: "example.com", Resource: "gadgets"}), cluster)},
	}
}

// TestContentOfAClusterIsScannedAndDeletedAlone scans and deletes the
// content of cluster "a" among siblings whose names share its prefix, in
// pages and spans smaller than the content, and checks that exactly a's
// keys went and that the visitor saw a's values only.
func TestContentOfAClusterIsScannedAndDeletedAlone(t *testing.T) {
	defer func(p int64, o, k int) { scanPage, txnOps, txnKeys = p, o, k }(scanPage, txnOps, txnKeys)
	scanPage, txnOps, txnKeys = 7, 1, 10

	kv := testEtcd(t)
	var want []string
	for _, c := range []string{"a", "a-b", "ab", "a:b"} {
		for i := range 25 {
			keys := []string{
				fmt.Sprintf("/registry/configmaps/%s/ns/cm-%02d", c, i),
				fmt.Sprintf("/registry/example.com/gadgets/customresources/%s/ns/g-%02d", c, i),
			}
			put(t, kv, keys...)
			if c != "a" {
				want = append(want, keys...)
			}
		}
	}
	slices.Sort(want)

	var visited []string
	scan, err := ScanContent(t.Context(), kv, contentOf("a"), func(i int, key, value []byte) error {
		if i != 0 {
			t.Errorf("visited range %d, which does not ask for values", i)
		}
		if string(value) != "v:"+string(key) {
			t.Errorf("value of %s is %q", key, value)
		}
		visited = append(visited, string(key))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scan.Keys != 50 || len(visited) != 25 {
		t.Fatalf("scan saw %d keys and visited %d, want 50 and 25", scan.Keys, len(visited))
	}
	for _, k := range visited {
		if !strings.HasPrefix(k, "/registry/configmaps/a/") {
			t.Errorf("visited %s, not of cluster a", k)
		}
	}
	if len(scan.spans) != 6 {
		t.Errorf("%d spans of 25+25 keys with at most 10 keys each, want 6", len(scan.spans))
	}
	deleted, complete, err := DeleteScanned(t.Context(), kv, scan)
	if err != nil || !complete || deleted != 50 {
		t.Fatalf("DeleteScanned = %d, %v, %v; want 50, true, nil", deleted, complete, err)
	}
	if got := allKeys(t, kv); !slices.Equal(got, want) {
		t.Errorf("keys left: %v\nwant: %v", got, want)
	}
}

// TestContentWrittenAfterTheScanIsNotDeleted writes into the cluster
// between the scan and the deletion: the span with the new key is not
// deleted, DeleteScanned says so, and a new scan sees the key.
func TestContentWrittenAfterTheScanIsNotDeleted(t *testing.T) {
	kv := testEtcd(t)
	put(t, kv, "/registry/configmaps/a/ns/old", "/registry/example.com/gadgets/customresources/a/ns/g")
	scan, err := ScanContent(context.Background(), kv, contentOf("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, kv, "/registry/configmaps/a/ns/new")
	_, complete, err := DeleteScanned(t.Context(), kv, scan)
	if err != nil {
		t.Fatal(err)
	}
	if complete {
		t.Fatal("DeleteScanned says all went, though a key was written after the scan")
	}
	if got := allKeys(t, kv); !slices.Contains(got, "/registry/configmaps/a/ns/new") || !slices.Contains(got, "/registry/configmaps/a/ns/old") {
		t.Fatalf("keys after a refused deletion: %v", got)
	}
	scan, err = ScanContent(t.Context(), kv, contentOf("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, complete, err := DeleteScanned(t.Context(), kv, scan); err != nil || !complete {
		t.Fatalf("second deletion: complete %v, err %v", complete, err)
	}
	if got := allKeys(t, kv); len(got) != 0 {
		t.Fatalf("keys left: %v", got)
	}
}

func TestCustomResourceOfCRD(t *testing.T) {
	for name, want := range map[string]schema.GroupResource{
		"gadgets.example.com": {Group: "example.com", Resource: "gadgets"},
		"a.b":                 {Group: "b", Resource: "a"},
	} {
		if got, ok := CustomResourceOfCRD(name); !ok || got != want {
			t.Errorf("CustomResourceOfCRD(%q) = %v, %v; want %v", name, got, ok, want)
		}
	}
	for _, name := range []string{"gadgets", ".example.com", "gadgets.", ""} {
		if got, ok := CustomResourceOfCRD(name); ok {
			t.Errorf("CustomResourceOfCRD(%q) = %v, want none", name, got)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	if got := PrefixEnd("/registry/configmaps/a/"); got != "/registry/configmaps/a0" {
		t.Errorf("PrefixEnd = %q", got)
	}
	if got := PrefixEnd("a\xff"); got != "b" {
		t.Errorf("PrefixEnd(a\\xff) = %q", got)
	}
}
