package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// The kubelet adds iptables chains (KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT, KUBE-FIREWALL and the
// jumps to it) when the iptables tools are installed. The sandbox records the chains that exist
// before its kubelet starts, and its teardown removes the chains that appeared since, with every
// rule that jumps to them. Without the tools there is nothing to record or remove.

var iptablesTools = []string{"iptables", "ip6tables"}

var iptablesTables = []string{"filter", "nat", "mangle"}

// iptablesChains returns the chains of every table, keyed "tool/table"; nil without the tools.
func iptablesChains() map[string][]string {
	out := map[string][]string{}
	for _, tool := range iptablesTools {
		if _, err := exec.LookPath(tool + "-save"); err != nil {
			continue
		}
		for _, table := range iptablesTables {
			chains, _, err := iptablesSave(tool, table)
			if err == nil {
				out[tool+"/"+table] = chains
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// iptablesSave lists one table's chains and rules (the "-A ..." lines).
func iptablesSave(tool, table string) (chains, rules []string, err error) {
	out, err := exec.Command(tool+"-save", "-t", table).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s-save -t %s: %w", tool, table, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, ":"):
			if f := strings.Fields(line[1:]); len(f) > 0 {
				chains = append(chains, f[0])
			}
		case strings.HasPrefix(line, "-A "):
			rules = append(rules, line)
		}
	}
	return chains, rules, nil
}

// removeNewIPTablesChains deletes the chains that are not in before, and the rules that jump to them.
func removeNewIPTablesChains(before map[string][]string) error {
	var errs []error
	for _, tool := range iptablesTools {
		for _, table := range iptablesTables {
			old, ok := before[tool+"/"+table]
			if !ok {
				continue
			}
			chains, rules, err := iptablesSave(tool, table)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			added := setMinus(chains, old)
			if len(added) == 0 {
				continue
			}
			isNew := map[string]bool{}
			for _, c := range added {
				isNew[c] = true
			}
			for _, r := range rules {
				args := splitRule(r)
				if len(args) < 2 || isNew[args[1]] || !isNew[jumpTarget(args)] {
					continue // rules inside new chains go with the flush below
				}
				args[0] = "-D"
				if err := runIPTables(tool, table, args...); err != nil {
					errs = append(errs, err)
				}
			}
			for _, c := range added {
				if err := runIPTables(tool, table, "-F", c); err != nil {
					errs = append(errs, err)
				}
			}
			for _, c := range added {
				if err := runIPTables(tool, table, "-X", c); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func runIPTables(tool, table string, args ...string) error {
	args = append([]string{"-w", "5", "-t", table}, args...)
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// jumpTarget returns the chain a rule jumps or goes to ("" for none).
func jumpTarget(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-j" || args[i] == "-g" {
			return args[i+1]
		}
	}
	return ""
}

// splitRule splits an iptables-save rule into arguments, honouring double quotes.
func splitRule(rule string) []string {
	var out []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(rule); i++ {
		c := rule[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(rule):
			i++
			cur.WriteByte(rule[i])
		case c == '"':
			inQuote, have = !inQuote, true
		case c == ' ' && !inQuote:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

// setMinus returns the elements of a not in b.
func setMinus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}
