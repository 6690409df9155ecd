package v1alpha1

import "testing"

// TestToSyncTargetKey pins the key to kcp's: base 62 of the SHA-224 of
// "<cluster>:<name>", a value a kcp syncer computes the same way.
func TestToSyncTargetKey(t *testing.T) {
	// echo -n 'root:compute:kind' | sha224sum, read as a big-endian number
	// and printed in base 62 (digits, lower, upper case).
	if got, want := ToSyncTargetKey("root:compute", "kind"), "8VetQyWy7guDLAmJ0asr7JUExgxZLM7L2M5skt"; got != want {
		t.Errorf("ToSyncTargetKey = %q, want %q", got, want)
	}
	if ToSyncTargetKey("a", "bc") == ToSyncTargetKey("ab", "c") {
		t.Error("the separator does not separate")
	}
}
