package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadInputGivesAClearMessageAndExitCode(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"no command", nil, 2, "usage: kruise-sandbox"},
		{"unknown command", []string{"launch"}, 2, `unknown command "launch"`},
		{"unknown flag", []string{"up", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{"stray argument", []string{"down", "extra"}, 2, `unexpected argument "extra"`},
		{"negative nodes", []string{"up", "--dir", filepath.Join(empty, "a"), "--nodes", "-1", "--bin-dir", empty}, 1, "--nodes must be >= 0"},
		{"missing binaries", []string{"up", "--dir", filepath.Join(empty, "b"), "--bin-dir", empty}, 1, "run `make tools`"},
		{"down without sandbox", []string{"down", "--dir", empty}, 1, "no sandbox in"},
		{"status without sandbox", []string{"status", "--dir", empty}, 1, "no sandbox in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(c.args, &out, &errOut)
			if code != c.code {
				t.Errorf("exit code = %d; want %d (stderr: %s)", code, c.code, errOut.String())
			}
			if !strings.Contains(errOut.String(), c.inStderr) {
				t.Errorf("stderr = %q; want it to contain %q", errOut.String(), c.inStderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version"}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "kruise-sandbox ") {
		t.Fatalf("version: code %d, output %q", code, out.String())
	}
}
