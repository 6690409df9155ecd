package plugin

import "testing"

func TestParseExportRef(t *testing.T) {
	for _, tc := range []struct {
		in       string
		wantPath string
		wantName string
		wantErr  bool
	}{
		{in: "cowboys", wantName: "cowboys"},
		{in: "wildwest.dev", wantName: "wildwest.dev"},
		{in: "root:cowboys", wantPath: "root", wantName: "cowboys"},
		{in: "root:wildwest:cowboys-service:wildwest.dev", wantPath: "root:wildwest:cowboys-service", wantName: "wildwest.dev"},
		{in: "2fx9c0hk:cowboys", wantPath: "2fx9c0hk", wantName: "cowboys"},
		{in: "", wantErr: true},
		{in: "root:", wantErr: true},
		{in: ":cowboys", wantErr: true},
		{in: "root:-a:cowboys", wantErr: true},
		{in: "root:a b:cowboys", wantErr: true},
	} {
		got, err := ParseExportRef(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseExportRef(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if got.Path.String() != tc.wantPath || got.Name != tc.wantName {
			t.Errorf("ParseExportRef(%q) = %q, %q; want %q, %q", tc.in, got.Path.String(), got.Name, tc.wantPath, tc.wantName)
		}
		if !tc.wantErr && got.String() != tc.in {
			t.Errorf("ParseExportRef(%q).String() = %q", tc.in, got.String())
		}
	}
}

// TestShortHash checks ShortHash against values computed independently of
// Go, with Python's hashlib:
//
//	d = hashlib.sha224(s.encode()).digest()
//	n = int.from_bytes(d, 'big'); digits = base 36 of n, 0-9a-z
//	zeros = len(d) - len(d.lstrip(b"\0"))
//	("0" * zeros + digits)[:8]
//
// The SHA-224 of "uid-167" starts with a zero byte (0048...), which kcp's
// base36 package writes as a leading '0'.
func TestShortHash(t *testing.T) {
	for in, want := range map[string]string{
		"7d4b3c9e-1f2a-4b5c-8d6e-0f1a2b3c4d5e": "19dwcphl",
		"e3b0c442-98fc-1c14-9afb-f4c8996fb924": "1u042508",
		"/clusters/root:compute":               "1pre20xf",
		"uid-167":                              "04me52lx",
	} {
		if got := ShortHash(in); got != want {
			t.Errorf("ShortHash(%q) = %q, want %q", in, got, want)
		}
	}
}
