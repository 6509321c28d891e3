package sandbox

import (
	"reflect"
	"testing"
)

func TestSplitRule(t *testing.T) {
	for _, tc := range []struct {
		rule string
		want []string
		jump string
	}{
		{"-A INPUT -j KUBE-FIREWALL", []string{"-A", "INPUT", "-j", "KUBE-FIREWALL"}, "KUBE-FIREWALL"},
		{`-A KUBE-FIREWALL ! -s 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -j DROP`,
			[]string{"-A", "KUBE-FIREWALL", "!", "-s", "127.0.0.0/8", "-m", "comment", "--comment", "block incoming localnet connections", "-j", "DROP"}, "DROP"},
		{`-A X -m comment --comment "say \"hi\"" -g Y`, []string{"-A", "X", "-m", "comment", "--comment", `say "hi"`, "-g", "Y"}, "Y"},
		{`-A X -m comment --comment "" -p tcp`, []string{"-A", "X", "-m", "comment", "--comment", "", "-p", "tcp"}, ""},
	} {
		got := splitRule(tc.rule)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitRule(%q) = %q, want %q", tc.rule, got, tc.want)
		}
		if j := jumpTarget(got); j != tc.jump {
			t.Errorf("jumpTarget(%q) = %q, want %q", tc.rule, j, tc.jump)
		}
	}
}
