package informers

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// TestIndexerAgreesWithClientGo applies the same random changes to
// NewIndexer and to client-go's cache.NewIndexer and compares every answer
// after each: items, keys, index values, keys and items by index value and
// by object, errors for unknown indexes, and indexes added while items are
// stored. The index functions give one value per object, none, several, or
// values shared by many objects.
func TestIndexerAgreesWithClientGo(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 1))
			indexers := func() cache.Indexers {
				is := ClusterIndexers()
				// Several values, shared: the object's labels.
				is["labels"] = func(obj any) ([]string, error) {
					m, err := meta.Accessor(obj)
					if err != nil {
						return nil, err
					}
					var out []string
					for k, v := range m.GetLabels() {
						out = append(out, k+"="+v)
					}
					return out, nil
				}
				// One value per object.
				is["uid"] = func(obj any) ([]string, error) {
					m, err := meta.Accessor(obj)
					if err != nil {
						return nil, err
					}
					return []string{string(m.GetUID())}, nil
				}
				return is
			}
			late := cache.Indexers{"generation": func(obj any) ([]string, error) {
				m, err := meta.Accessor(obj)
				if err != nil {
					return nil, err
				}
				if m.GetGeneration() == 0 {
					return nil, nil
				}
				return []string{fmt.Sprint(m.GetGeneration() % 3)}, nil
			}}
			ours := NewIndexer(KeyFunc, indexers(), nil)
			theirs := cache.NewIndexer(KeyFunc, indexers())
			object := func() *metav1.PartialObjectMetadata {
				o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
					Name:            fmt.Sprintf("o%d", rnd.IntN(12)),
					ResourceVersion: fmt.Sprint(rnd.IntN(1000)),
					UID:             types.UID(fmt.Sprintf("u%d", rnd.IntN(20))),
					Generation:      int64(rnd.IntN(5)),
					Annotations:     map[string]string{logicalcluster.AnnotationKey: fmt.Sprintf("c%d", rnd.IntN(3))},
				}}
				if rnd.IntN(2) == 0 {
					o.Namespace = fmt.Sprintf("ns%d", rnd.IntN(2))
				}
				for _, l := range []string{"a", "b", "c"} {
					if rnd.IntN(2) == 0 {
						if o.Labels == nil {
							o.Labels = map[string]string{}
						}
						o.Labels[l] = fmt.Sprint(rnd.IntN(2))
					}
				}
				return o
			}
			for step := range 400 {
				var op string
				switch r := rnd.IntN(100); {
				case r < 45:
					o := object()
					op = "add " + mustKey(o)
					check(t, op, ours.Add(o), theirs.Add(o.DeepCopy()))
				case r < 70:
					o := object()
					op = "update " + mustKey(o)
					check(t, op, ours.Update(o), theirs.Update(o.DeepCopy()))
				case r < 90:
					o := object()
					op = "delete " + mustKey(o)
					check(t, op, ours.Delete(o), theirs.Delete(o.DeepCopy()))
				case r < 95:
					var list, copies []any
					for range rnd.IntN(8) {
						o := object()
						list, copies = append(list, o), append(copies, o.DeepCopy())
					}
					op = fmt.Sprintf("replace with %d", len(list))
					check(t, op, ours.Replace(list, "7"), theirs.Replace(copies, "7"))
				case r < 97 && ours.GetIndexers()["generation"] == nil:
					op = "add the generation index"
					check(t, op, ours.AddIndexers(late), theirs.AddIndexers(late))
				default:
					op = "add the uid index again"
					check(t, op, ours.AddIndexers(cache.Indexers{"uid": indexers()["uid"]}), theirs.AddIndexers(cache.Indexers{"uid": indexers()["uid"]}))
				}
				compareIndexers(t, fmt.Sprintf("step %d (%s)", step, op), ours, theirs, object)
				if t.Failed() {
					return
				}
			}
		})
	}
}

func mustKey(obj any) string {
	k, err := KeyFunc(obj)
	if err != nil {
		panic(err)
	}
	return k
}

func check(t *testing.T, op string, ours, theirs error) {
	t.Helper()
	if fmt.Sprint(ours) != fmt.Sprint(theirs) {
		t.Errorf("%s: error %v, client-go's %v", op, ours, theirs)
	}
}

// keysOf returns the sorted keys of items, with their resourceVersions.
func keysOf(items []any) []string {
	out := make([]string, 0, len(items))
	for _, item := range items {
		m, _ := meta.Accessor(item)
		out = append(out, mustKey(item)+"@"+m.GetResourceVersion())
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func compareIndexers(t *testing.T, at string, ours, theirs cache.Indexer, object func() *metav1.PartialObjectMetadata) {
	t.Helper()
	same := func(what string, a, b any) {
		t.Helper()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %s: %v, client-go's %v", at, what, a, b)
		}
	}
	same("List", keysOf(ours.List()), keysOf(theirs.List()))
	same("ListKeys", sorted(ours.ListKeys()), sorted(theirs.ListKeys()))
	for _, k := range theirs.ListKeys() {
		a, aok, aerr := ours.GetByKey(k)
		b, bok, berr := theirs.GetByKey(k)
		same("GetByKey "+k, fmt.Sprint(aok, aerr), fmt.Sprint(bok, berr))
		if aok && bok {
			same("GetByKey "+k, keysOf([]any{a}), keysOf([]any{b}))
		}
	}
	names := []string{"no-such-index"}
	for name := range theirs.GetIndexers() {
		names = append(names, name)
	}
	same("indexers", sorted(names[1:]), sorted(slices.Collect(mapKeys(ours.GetIndexers()))))
	for _, name := range names {
		values := ours.ListIndexFuncValues(name)
		same("ListIndexFuncValues "+name, sorted(values), sorted(theirs.ListIndexFuncValues(name)))
		for _, v := range append(values, "no-such-value") {
			a, aerr := ours.IndexKeys(name, v)
			b, berr := theirs.IndexKeys(name, v)
			same(fmt.Sprintf("IndexKeys %s %s error", name, v), fmt.Sprint(aerr), fmt.Sprint(berr))
			if len(a) != 0 || len(b) != 0 {
				same(fmt.Sprintf("IndexKeys %s %s", name, v), a, b)
			}
			ai, aerr := ours.ByIndex(name, v)
			bi, berr := theirs.ByIndex(name, v)
			same(fmt.Sprintf("ByIndex %s %s error", name, v), fmt.Sprint(aerr), fmt.Sprint(berr))
			same(fmt.Sprintf("ByIndex %s %s", name, v), keysOf(ai), keysOf(bi))
		}
		for range 3 {
			o := object()
			ai, aerr := ours.Index(name, o)
			bi, berr := theirs.Index(name, o)
			same(fmt.Sprintf("Index %s %s error", name, mustKey(o)), fmt.Sprint(aerr), fmt.Sprint(berr))
			same(fmt.Sprintf("Index %s %s", name, mustKey(o)), keysOf(ai), keysOf(bi))
		}
	}
	if t.Failed() && !strings.Contains(at, "dump") {
		t.Logf("%s: keys %v", at, sorted(theirs.ListKeys()))
	}
}

func mapKeys(m cache.Indexers) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestIndexerHoldsOneKeyInline pins what the indexer is for: an index
// value of one object has no set of its own, and a shared value's set goes
// away when one object is left.
func TestIndexerHoldsOneKeyInline(t *testing.T) {
	x := NewIndexer(KeyFunc, ClusterIndexers(), nil).(*indexer)
	obj := func(cluster, name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1",
			Annotations: map[string]string{logicalcluster.AnnotationKey: cluster}}}
	}
	for i := range 100 {
		if err := x.Add(obj(fmt.Sprintf("c%d", i), "a")); err != nil {
			t.Fatal(err)
		}
	}
	for v, k := range x.indices[ClusterIndex] {
		if k.many != nil {
			t.Errorf("value %s of one object has a set", v)
		}
	}
	if err := x.Add(obj("c1", "b")); err != nil {
		t.Fatal(err)
	}
	if k := x.indices[ClusterIndex]["c1"]; k.len() != 2 || k.many == nil {
		t.Errorf("value c1 of two objects: %+v", k)
	}
	if err := x.Delete(obj("c1", "a")); err != nil {
		t.Fatal(err)
	}
	if k := x.indices[ClusterIndex]["c1"]; k.many != nil || k.one != "c1|b" {
		t.Errorf("value c1 of one object again: %+v, want c1|b inline", k)
	}
	if err := x.Delete(obj("c1", "b")); err != nil {
		t.Fatal(err)
	}
	if _, ok := x.indices[ClusterIndex]["c1"]; ok {
		t.Errorf("value c1 of no object is still indexed")
	}
}
