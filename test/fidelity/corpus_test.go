package fidelity

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// metaEdit changes the metadata of an object.
type metaEdit struct {
	name string
	fn   func(m metav1.Object)
}

// metadataEdits are the edge cases of ObjectMeta every kind is tried with.
var metadataEdits = []metaEdit{
	{"as is", func(metav1.Object) {}},
	{"no name", func(m metav1.Object) { m.SetName("") }},
	{"generateName", func(m metav1.Object) { m.SetName(""); m.SetGenerateName("gen-") }},
	{"upper-case name", func(m metav1.Object) { m.SetName("Upper") }},
	{"dotted name", func(m metav1.Object) { m.SetName("a.b.c") }},
	{"double dot name", func(m metav1.Object) { m.SetName("a..b") }},
	{"underscore name", func(m metav1.Object) { m.SetName("a_b") }},
	{"name with colon", func(m metav1.Object) { m.SetName("a:b") }},
	{"63-character name", func(m metav1.Object) { m.SetName(strings.Repeat("a", 63)) }},
	{"64-character name", func(m metav1.Object) { m.SetName(strings.Repeat("a", 64)) }},
	{"253-character name", func(m metav1.Object) { m.SetName(strings.Repeat("a", 253)) }},
	{"254-character name", func(m metav1.Object) { m.SetName(strings.Repeat("a", 254)) }},
	{"name ..", func(m metav1.Object) { m.SetName("..") }},
	{"name with slash", func(m metav1.Object) { m.SetName("a/b") }},
	{"name with percent", func(m metav1.Object) { m.SetName("a%b") }},
	{"name .", func(m metav1.Object) { m.SetName(".") }},
	{"name with leading dash", func(m metav1.Object) { m.SetName("-a") }},
	{"name with space", func(m metav1.Object) { m.SetName("a b") }},
	{"bad generateName", func(m metav1.Object) { m.SetName(""); m.SetGenerateName("Gen_") }},
	{"name and bad generateName", func(m metav1.Object) { m.SetGenerateName("Gen_") }},
	{"label value with bang", func(m metav1.Object) { m.SetLabels(map[string]string{"k": "bad!"}) }},
	{"label with prefix and empty value", func(m metav1.Object) { m.SetLabels(map[string]string{"example.com/k": ""}) }},
	{"label prefix with underscore", func(m metav1.Object) { m.SetLabels(map[string]string{"example_com/k": "v"}) }},
	{"finalizer with bad domain", func(m metav1.Object) { m.SetFinalizers([]string{"Example_com/a"}) }},
	{"kubernetes.io finalizer", func(m metav1.Object) { m.SetFinalizers([]string{"kubernetes.io/pv-protection"}) }},
	{"empty finalizer", func(m metav1.Object) { m.SetFinalizers([]string{""}) }},
	{"generation set", func(m metav1.Object) { m.SetGeneration(7) }},
	{"negative generation", func(m metav1.Object) { m.SetGeneration(-1) }},
	{"uid set", func(m metav1.Object) { m.SetUID("cafe") }},
	{"deletion grace period set", func(m metav1.Object) { g := int64(30); m.SetDeletionGracePeriodSeconds(&g) }},
	{"good labels", func(m metav1.Object) {
		m.SetLabels(map[string]string{"app": "web", "example.com/tier": "front", "empty": ""})
	}},
	{"label key with two slashes", func(m metav1.Object) { m.SetLabels(map[string]string{"a/b/c": "x"}) }},
	{"label value too long", func(m metav1.Object) { m.SetLabels(map[string]string{"a": strings.Repeat("v", 64)}) }},
	{"label value with space", func(m metav1.Object) { m.SetLabels(map[string]string{"a": "b c"}) }},
	{"label prefix upper case", func(m metav1.Object) { m.SetLabels(map[string]string{"Example.com/a": "b"}) }},
	{"good annotations", func(m metav1.Object) {
		m.SetAnnotations(map[string]string{"example.com/note": "any value: with spaces\nand lines"})
	}},
	{"annotation key invalid", func(m metav1.Object) { m.SetAnnotations(map[string]string{"bad key": "x"}) }},
	{"annotations too large", func(m metav1.Object) {
		m.SetAnnotations(map[string]string{"a": strings.Repeat("x", 256*1024)})
	}},
	{"qualified finalizer", func(m metav1.Object) { m.SetFinalizers([]string{"example.com/cleanup"}) }},
	{"unqualified finalizer", func(m metav1.Object) { m.SetFinalizers([]string{"cleanup"}) }},
	{"finalizer kubernetes", func(m metav1.Object) { m.SetFinalizers([]string{"kubernetes"}) }},
	{"finalizer orphan", func(m metav1.Object) { m.SetFinalizers([]string{metav1.FinalizerOrphanDependents}) }},
	{"finalizer with two slashes", func(m metav1.Object) { m.SetFinalizers([]string{"a/b/c"}) }},
	{"duplicate finalizers", func(m metav1.Object) { m.SetFinalizers([]string{"example.com/x", "example.com/x"}) }},
	{"orphan and foreground finalizers", func(m metav1.Object) {
		m.SetFinalizers([]string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents})
	}},
	{"owner reference", func(m metav1.Object) {
		m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "uid-1"}})
	}},
	{"owner reference without uid", func(m metav1.Object) {
		m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner"}})
	}},
	{"two controller owners", func(m metav1.Object) {
		yes := true
		m.SetOwnerReferences([]metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "a", UID: "uid-a", Controller: &yes},
			{APIVersion: "v1", Kind: "ConfigMap", Name: "b", UID: "uid-b", Controller: &yes},
		})
	}},
	{"owner reference with bad apiVersion", func(m metav1.Object) {
		m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "a/b/c", Kind: "ConfigMap", Name: "owner", UID: "u"}})
	}},
	{"negative deletion grace period", func(m metav1.Object) { g := int64(-1); m.SetDeletionGracePeriodSeconds(&g) }},
	{"managed fields", func(m metav1.Object) {
		m.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"}})
	}},
	{"managed fields without operation", func(m metav1.Object) {
		m.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m", APIVersion: "v1"}})
	}},
}

// namespacedEdits are tried with namespaced kinds only.
var namespacedEdits = []metaEdit{
	{"no namespace", func(m metav1.Object) { m.SetNamespace("") }},
	{"upper-case namespace", func(m metav1.Object) { m.SetNamespace("Default") }},
}

// corpus returns k's valid object with every metadata edit, and random
// objects: the valid object with random labels, annotations and finalizers.
func corpus(k kind) []testCase {
	var out []testCase
	edits := metadataEdits
	if m, _ := meta.Accessor(k.valid()); m.GetNamespace() != "" {
		edits = append(append([]metaEdit{}, edits...), namespacedEdits...)
	}
	for _, e := range edits {
		obj := k.valid()
		m, _ := meta.Accessor(obj)
		e.fn(m)
		out = append(out, testCase{name: e.name, obj: obj})
	}
	rnd := rand.New(rand.NewPCG(1, uint64(len(k.gvr.Resource))))
	for i := range 25 {
		obj := k.valid()
		m, _ := meta.Accessor(obj)
		m.SetLabels(randomMap(rnd, labelKeys, labelValues))
		m.SetAnnotations(randomMap(rnd, labelKeys, []string{"", "x", "a b", strings.Repeat("y", 300)}))
		if rnd.IntN(3) == 0 {
			m.SetFinalizers([]string{pick(rnd, "example.com/a", "b", "kubernetes", "x/y/z", "example.com/a")})
		}
		out = append(out, testCase{name: fmt.Sprintf("random %d", i), obj: obj})
	}
	return out
}

var (
	labelKeys   = []string{"a", "app", "example.com/a", "a.b/c", "-a", "a-", "x/", "/x", strings.Repeat("k", 63), strings.Repeat("k", 64), "k8s.io/x", "A", "a b"}
	labelValues = []string{"", "v", "V-1.2_3", "-v", "v-", strings.Repeat("v", 63), strings.Repeat("v", 64), "a b", "a/b"}
)

func pick(rnd *rand.Rand, s ...string) string { return s[rnd.IntN(len(s))] }

func randomMap(rnd *rand.Rand, keys, values []string) map[string]string {
	n := rnd.IntN(4)
	if n == 0 {
		return nil
	}
	out := map[string]string{}
	for range n {
		out[pick(rnd, keys...)] = pick(rnd, values...)
	}
	return out
}

// updateCorpus are edits of a created object that every kind is updated
// with.
func updateCorpus() []testCase {
	edit := func(name string, fn func(m metav1.Object)) testCase {
		return testCase{name: name, edit: func(obj runtime.Object) {
			m, _ := meta.Accessor(obj)
			fn(m)
		}}
	}
	return []testCase{
		edit("no change", func(metav1.Object) {}),
		edit("new labels", func(m metav1.Object) { m.SetLabels(map[string]string{"x": "y"}) }),
		edit("bad label", func(m metav1.Object) { m.SetLabels(map[string]string{"x/y/z": "y"}) }),
		edit("renamed", func(m metav1.Object) { m.SetName("other") }),
		edit("new uid", func(m metav1.Object) { m.SetUID("other-uid") }),
		edit("finalizer added", func(m metav1.Object) { m.SetFinalizers([]string{"example.com/f"}) }),
		edit("unqualified finalizer added", func(m metav1.Object) { m.SetFinalizers([]string{"f"}) }),
		edit("creation timestamp changed", func(m metav1.Object) { m.SetCreationTimestamp(metav1.Unix(1, 0)) }),
		edit("generation changed", func(m metav1.Object) { m.SetGeneration(m.GetGeneration() + 5) }),
		edit("generateName changed", func(m metav1.Object) { m.SetGenerateName("x-") }),
		edit("namespace changed", func(m metav1.Object) {
			if m.GetNamespace() != "" {
				m.SetNamespace("elsewhere")
			}
		}),
		edit("deletion timestamp set", func(m metav1.Object) { ts := metav1.Unix(2, 0); m.SetDeletionTimestamp(&ts) }),
		edit("bad finalizer appended", func(m metav1.Object) { m.SetFinalizers(append(m.GetFinalizers(), "Bad_Domain/x")) }),
		edit("owner reference added", func(m metav1.Object) {
			m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "uid-1"}})
		}),
	}
}

// ratchetCorpus returns, for every create case, an update of the object
// as created (stored before the rules got stricter, or by Kubernetes) that
// only adds a label: Kubernetes accepts some invalid stored values as long
// as an update keeps them, and refuses others again.
func ratchetCorpus(creates []testCase) []testCase {
	var out []testCase
	for _, c := range creates {
		out = append(out, testCase{
			name:   c.name + " (stored)",
			stored: stored(c.obj),
			edit: func(obj runtime.Object) {
				m, _ := meta.Accessor(obj)
				labels := map[string]string{}
				for k, v := range m.GetLabels() {
					labels[k] = v
				}
				labels["touched"] = "yes"
				m.SetLabels(labels)
			},
		})
	}
	return out
}

// Random chains: every kind is also changed by chains of seeded random
// edits, applied in sequence as updates, each of what the previous step
// stored, and compared at every step; a step one side refuses leaves the
// object as it was. Half the chains start from an edit of the kind, created,
// rather than from the valid object. The edits of a chain, applied together
// to the object it starts from, are also created.
const (
	// chains is the number of random chains per kind.
	chains = 16
	// chainLength is the length of a chain.
	chainLength = 6
)

// chainSeed seeds the chains: FIDELITY_SEED=n go test explores others.
var chainSeed = func() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("FIDELITY_SEED"), 10, 64); err == nil {
		return n
	}
	return 2
}()

// chain is a random chain of edits.
type chain struct {
	name string
	// start, when set, is an edit of the valid object the chain starts
	// from, created, rather than the created valid object.
	start *testCase
	edits []testCase
}

// chainEdits are the edits chains pick from: the metadata edits, the
// update corpus and k's updates (but those of another stored object) and
// edits, and the content of k's create cases.
func chainEdits(k kind) []testCase {
	var out []testCase
	for _, e := range metadataEdits {
		fn := e.fn
		out = append(out, testCase{name: e.name, edit: func(obj runtime.Object) {
			m, _ := meta.Accessor(obj)
			fn(m)
		}})
	}
	for _, c := range append(append(updateCorpus(), k.updates...), k.edits...) {
		if c.stored == nil {
			out = append(out, c)
		}
	}
	for _, c := range k.cases {
		out = append(out, becomes(c))
	}
	return out
}

// becomes returns the edit that gives an object the content of the create
// case c, all but its metadata.
func becomes(c testCase) testCase {
	return testCase{name: "becomes " + c.name, edit: func(obj runtime.Object) {
		dst, src := reflect.ValueOf(obj).Elem(), reflect.ValueOf(c.obj.DeepCopyObject()).Elem()
		if dst.Type() != src.Type() {
			panic(fmt.Sprintf("%s: %s into %s", c.name, src.Type(), dst.Type()))
		}
		for i := range dst.NumField() {
			if f := dst.Type().Field(i); f.Name != "ObjectMeta" && f.Name != "TypeMeta" {
				dst.Field(i).Set(src.Field(i))
			}
		}
	}}
}

// randomChains returns k's chains, seeded by its name.
func randomChains(k kind) []chain {
	h := fnv.New64a()
	h.Write([]byte(k.name()))
	rnd := rand.New(rand.NewPCG(chainSeed, h.Sum64()))
	edits := chainEdits(k)
	var out []chain
	for i := range chains {
		c := chain{name: fmt.Sprintf("chain %d", i)}
		if i%2 == 1 && len(k.edits) > 0 {
			c.start = &k.edits[rnd.IntN(len(k.edits))]
		}
		for range chainLength {
			c.edits = append(c.edits, edits[rnd.IntN(len(edits))])
		}
		out = append(out, c)
	}
	return out
}

// applyEdit applies e to obj and reports whether it applied: an edit of
// what an earlier edit removed (an entry of a nil map, an item of an
// empty list) does not.
func applyEdit(e testCase, obj runtime.Object) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	e.edit(obj)
	return true
}
