package sidecarrules

import "testing"

// TestMergePatch: results as OpenKruise's merge-patch library (evanphx/json-patch v4) writes them,
// byte for byte (checked against that library when this was written).
func TestMergePatch(t *testing.T) {
	cases := []struct {
		doc, patch, want string
		wantErr          bool
	}{
		{`{"app":1}`, `{"envoy":2,"app":null}`, `{"envoy":2}`, false},
		// Untouched values keep their key order; new ones lose their nulls and get sorted keys.
		{`{"b": 1, "a": {"z": 1, "y": 2}}`, `{"c":{"q":null,"p":[{"z":1,"a":null},null]}}`, `{"a":{"z":1,"y":2},"b":1,"c":{"p":[{"z":1},null]}}`, false},
		{`{"a":{"z":1,"y":{"k":2,"j":1}}}`, `{"a":{"x":3}}`, `{"a":{"x":3,"y":{"k":2,"j":1},"z":1}}`, false},
		{`{"a":"<&>","n":1.50}`, `{"b":1e3}`, `{"a":"\u003c\u0026\u003e","b":1e3,"n":1.50}`, false},
		{`[1]`, `{"a":null,"b":1}`, `{"b":1}`, false},
		{`{"a":1}`, `[1,null,{"b":null}]`, `[1,null,{}]`, false},
		{`{"a":1}`, `"x"`, ``, true},
		{`plain`, `{}`, ``, true},
	}
	for _, tc := range cases {
		got, err := mergePatch([]byte(tc.doc), []byte(tc.patch))
		if (err != nil) != tc.wantErr || string(got) != tc.want {
			t.Errorf("mergePatch(%s, %s) = %s, %v; want %s (error %v)", tc.doc, tc.patch, got, err, tc.want, tc.wantErr)
		}
	}
}
