package workspace

import (
	"fmt"
	"testing"
	"time"

	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestVersions(t *testing.T) {
	now := time.Unix(1000, 0)
	v := newVersions(time.Minute, func() time.Time { return now })
	key := reconciler.Key{Cluster: "c", Name: "w"}

	if _, newer := v.newer(key, "5"); newer {
		t.Errorf("newer without a note")
	}
	v.note(key, "10")
	v.note(key, "7") // an older read does not lower it
	if left, newer := v.newer(key, "9"); !newer || left != time.Minute {
		t.Errorf("newer(9) = %v, %v; want true with a minute left", left, newer)
	}
	v.note(key, "10")
	if _, newer := v.newer(key, "10"); newer || v.len() != 0 {
		t.Errorf("a copy that caught up is still behind, or the note was kept")
	}

	v.note(key, "10")
	if _, newer := v.newer(key, "not-a-number"); newer {
		t.Errorf("an unparsable resourceVersion is held back")
	}
	now = now.Add(time.Minute)
	if _, newer := v.newer(key, "9"); newer || v.len() != 0 {
		t.Errorf("an expired note counted or was kept")
	}

	v.note(key, "not-a-number")
	if v.len() != 0 {
		t.Errorf("an unparsable resourceVersion was noted")
	}
}

// TestVersionsSweep: notes whose keys are never reconciled again go away
// once they expire, so the map holds at most the notes of 2*ttl.
func TestVersionsSweep(t *testing.T) {
	now := time.Unix(1000, 0)
	v := newVersions(time.Minute, func() time.Time { return now })
	for i := range 100 {
		v.note(reconciler.Key{Cluster: "c", Name: fmt.Sprint(i)}, "1")
		now = now.Add(time.Second)
	}
	if v.len() > 100 {
		t.Fatalf("%d notes", v.len())
	}
	now = now.Add(2 * time.Minute)
	v.note(reconciler.Key{Cluster: "c", Name: "last"}, "1")
	if v.len() != 1 {
		t.Errorf("%d notes after they expired, want only the new one", v.len())
	}
}
