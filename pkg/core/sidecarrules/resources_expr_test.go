package sidecarrules

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestParseResourceExprGrammar: what parses, and what is refused whatever the values.
func TestParseResourceExprGrammar(t *testing.T) {
	ok := []string{
		"cpu", "memory", "CPU", "Memory", "50m", "1.5Gi", ".5Gi", "2", "0.5", "50%", "1e3", "1.5e-2",
		"max(cpu*50%, 50m)", "Max(cpu, 1)", "MIN(1, 2)", "max(min(10, 20), 15)",
		"min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)",
		"0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)",
		"-cpu", "--1", "2--3", "2*-3", "-(1-3)", "(cpu)", "((1))",
		"  2\t+\n3  ", "2\xa0+\xa03", // unicode.IsSpace bytes, NBSP read as Latin-1
		"5\x00 anything",                  // a NUL byte ends the input
		"100n", "5ki", "5E", ".", "1e400", // numbers that do not parse count as 0 (or ±Inf)
		"cpu*cpu", "2/cpu", "1/0", "cpu-100m", // refused only when evaluated
	}
	for _, s := range ok {
		if _, err := ParseResourceExpr(s); err != nil {
			t.Errorf("ParseResourceExpr(%q): %v", s, err)
		}
	}
	bad := map[string]string{
		"":              "syntax error",
		"   ":           "syntax error",
		"\x00cpu":       "syntax error",
		"2 + @":         "syntax error",
		"(2 + 3":        "syntax error",
		"()":            "syntax error",
		"+3":            "syntax error",
		"cpu 2":         "syntax error",
		"50 %":          "syntax error",
		"2 +":           "syntax error",
		"max()":         "syntax error",
		"max(1, 2, 3)":  "syntax error",
		"max(1,)":       "syntax error",
		"1.5.3":         "syntax error",
		"5em":           "syntax error", // "5e" then the name m
		"_cpu":          "syntax error",
		"max(cpu)":      "max function requires exactly 2 arguments",
		"min(1)":        "min function requires exactly 2 arguments",
		"sum(1, 2)":     "unknown function: sum",
		"cpu(1, 2)":     "unknown function: cpu",
		"disk * 2":      "undefined variable: disk",
		"max + 1":       "undefined variable: max",
		"1e3m":          "invalid quantity",
		"2e3Gi":         "invalid quantity",
		"5\xdb\xb5Mi":   "invalid quantity", // U+06F5 is a digit to the quantity check, as in OpenKruise
		"cpu*2 extra":   "syntax error",
		"(((((((((cpu":  "syntax error",
		"max(cpu, 1) )": "syntax error",
		"cpu % 2":       "syntax error",
		"cpu ^ 2":       "syntax error",
		"1,2":           "syntax error",
		"memory(1, 2)":  "unknown function: memory",
		"cpu*50%%":      "syntax error",
		"50%m":          "syntax error",
		"1e+":           "", // parses: "1e+" is a NUMBER that counts as 0
		"0x10":          "syntax error",
		"1_000":         "syntax error",
		"cpu\u00e9":     "undefined variable", // é is two bytes; the first reads as the letter Ã
		strings.Repeat("(", maxExprDepth+1) + "1" + strings.Repeat(")", maxExprDepth+1): "nested deeper",
	}
	for s, want := range bad {
		_, err := ParseResourceExpr(s)
		if want == "" {
			if err != nil {
				t.Errorf("ParseResourceExpr(%q): %v", s, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseResourceExpr(%q) = %v, want an error with %q", s, err, want)
		}
	}
}

// TestResourceExprLongChain: a long chain of operations is no deep nesting: it parses and
// evaluates without deep recursion.
func TestResourceExprLongChain(t *testing.T) {
	e, err := ParseResourceExpr(strings.Repeat("cpu+", 200000) + "1")
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.eval(map[string]exprValue{"cpu": {isQty: true, q: resource.MustParse("1m")}})
	if err != nil || v.q.String() != "201" { // 200000 × 1m + 1
		t.Errorf("= %s, %v; want 201", v.q.String(), err)
	}
}

// rpBound is a variable binding for the evaluation tests: a quantity, or a plain number.
type rpBound struct {
	name string
	qty  string // parsed with resource.MustParse; "" with num == 0 means the zero Quantity{}
	num  float64
	isN  bool
}

func (b rpBound) vars() map[string]exprValue {
	if b.name == "" {
		return nil
	}
	if b.isN {
		return map[string]exprValue{b.name: {n: b.num}}
	}
	var q resource.Quantity
	if b.qty != "" {
		q = resource.MustParse(b.qty)
	}
	return map[string]exprValue{b.name: {isQty: true, q: q}}
}

func rpCPU(q string) rpBound    { return rpBound{name: "cpu", qty: q} }
func rpMemory(q string) rpBound { return rpBound{name: "memory", qty: q} }

// TestResourceExprEval: the value of expressions, as OpenKruise's calculator computes them,
// quantities compared by their String (so formats count).
func TestResourceExprEval(t *testing.T) {
	cases := []struct {
		expr string
		vars rpBound
		want string // a quantity's String, or "n:<%g>" for a plain number, or "err:<substring>"
	}{
		// proposal stories and OpenKruise's own unit tests
		{"max(cpu*50%, 50m)", rpCPU("200m"), "100m"},
		{"max(cpu*50%, 50m)", rpCPU("600m"), "300m"},
		{"max(cpu*50%, 50m)", rpCPU("50m"), "50m"},
		{"max(cpu*50%, 50m)", rpCPU(""), "50m"},
		{"cpu*50%", rpCPU(""), "0"},
		{"memory*30%", rpMemory("600Mi"), "180Mi"},
		{"max(memory*25%, 100Mi)", rpMemory("2000Mi"), "500Mi"},
		{"memory + 100Mi", rpMemory("200Mi"), "300Mi"},
		{"0.5 * memory + max(0, memory-2Gi)", rpMemory("8Gi"), "10Gi"},
		{"max(min(2*cpu,-cpu+3.0),2*cpu-3.0)", rpCPU("1.5"), "1500m"},
		{"max(min(2*cpu,3.0-cpu),2*cpu-3.0)", rpCPU("1.5"), "1500m"},
		// numbers are cores (units) when they meet a quantity: int64(n*1000) milli-units
		{"min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)", rpCPU("500m"), "500m"},
		{"min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)", rpCPU("2"), "1"},
		{"min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)", rpCPU("10"), "3"},
		{"cpu + 1", rpCPU("500m"), "1500m"},
		{"1 + cpu", rpCPU("500m"), "1500m"},
		{"max(40m, 20)", rpBound{}, "20"},
		{"max(0.0004, 0m)", rpBound{}, "0"}, // 0.4m truncates to 0m: a tie, the left (converted) one
		{"memory - 2", rpMemory("1Ki"), "1022"},
		// quantity arithmetic keeps the left operand's format (the right one's when the left is 0)
		{"40m + 20m", rpBound{}, "60m"},
		{"100Mi - 50Mi", rpBound{}, "50Mi"},
		{"1Gi + 1000M", rpBound{}, "2073741824"},
		{"1000M + 1Gi", rpBound{}, "2073741824"},
		{"0 + 1Gi", rpBound{}, "1Gi"},
		{"2 * 40m", rpBound{}, "80m"},
		{"100m / 2", rpBound{}, "50m"},
		// products and quotients truncate toward zero in milli-units
		{"cpu/3", rpCPU("100m"), "33m"},
		{"cpu*33%", rpCPU("1"), "330m"},
		{"cpu*0.0001", rpCPU("1"), "0"},
		{"memory*50%", rpMemory("1"), "500m"},
		{"memory/3", rpMemory("1Mi"), "349525333m"},
		// numbers alone
		{"2 + 3", rpBound{}, "n:5"},
		{"2+3*4", rpBound{}, "n:14"},
		{"10-3-4", rpBound{}, "n:3"},
		{"16/4/2", rpBound{}, "n:2"},
		{"-2*-3", rpBound{}, "n:6"},
		{"2--3", rpBound{}, "n:5"},
		{"-(1-3)", rpBound{}, "n:2"},
		{"50%", rpBound{}, "n:0.5"},
		{"100.5%", rpBound{}, "n:1.005"},
		{"1e2%", rpBound{}, "n:1"},
		{"1.5e2 * 2", rpBound{}, "n:300"},
		{"max(10, 20)", rpBound{}, "n:20"},
		{"MIN(10, 20)", rpBound{}, "n:10"},
		{"10 - 10", rpBound{}, "n:0"},
		// OpenKruise's lexer quirks: a NUMBER that strconv cannot read counts as 0 (or ±Inf)
		{"100n", rpBound{}, "n:0"},
		{"cpu*5ki", rpCPU("1"), "0"},
		{".", rpBound{}, "n:0"},
		{"5E", rpBound{}, "n:0"},
		{"1e+", rpBound{}, "n:0"},
		{"1e400%", rpBound{}, "n:0"},
		{"1e400", rpBound{}, "n:+Inf"},
		{"5\x00 anything", rpBound{}, "n:5"},
		{"2\xa0+\xa03", rpBound{}, "n:5"},
		{"CPU * 2", rpCPU("1"), "2"},
		// the variable is the one bound
		{"cpu", rpCPU("250m"), "250m"},
		{"-cpu", rpCPU("250m"), "-250m"},
		{"cpu", rpBound{name: "cpu", num: 1, isN: true}, "n:1"},
		{"cpu*cpu", rpBound{name: "cpu", num: 2, isN: true}, "n:4"},
		// errors
		{"cpu*cpu", rpCPU("1"), "err:multiplication of two quantities"},
		{"40m * 2m", rpBound{}, "err:multiplication of two quantities"},
		{"2/cpu", rpCPU("1"), "err:division by quantity"},
		{"2 / 40m", rpBound{}, "err:division by quantity"},
		{"cpu/0", rpCPU("1"), "err:division by zero"},
		{"cpu/(1-1)", rpCPU("1"), "err:division by zero"},
		{"10 / 0", rpBound{}, "err:division by zero"},
		{"memory", rpCPU("1"), "err:undefined variable: memory"},
		{"cpu*1e400", rpCPU("1"), "err:out of the range"},
		{"1e400 - 1e400 + cpu", rpCPU("1"), "err:out of the range"},
		{"max(cpu, 1e400)", rpCPU("1"), "err:out of the range"},
	}
	for _, tc := range cases {
		e, err := ParseResourceExpr(tc.expr)
		if err != nil {
			t.Errorf("ParseResourceExpr(%q): %v", tc.expr, err)
			continue
		}
		v, err := e.eval(tc.vars.vars())
		got := ""
		switch {
		case err != nil:
			got = "err:" + err.Error()
		case v.isQty:
			got = v.q.String()
		default:
			got = "n:" + strconv.FormatFloat(v.n, 'g', -1, 64)
		}
		if strings.HasPrefix(tc.want, "err:") && strings.HasPrefix(got, "err:") {
			if !strings.Contains(got, strings.TrimPrefix(tc.want, "err:")) {
				t.Errorf("%q with %+v: %s, want %s", tc.expr, tc.vars, got, tc.want)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%q with %+v = %s, want %s", tc.expr, tc.vars, got, tc.want)
		}
	}
}

// TestEvalPolicyExpr: evaluation at injection: the variable named by the word "memory", the
// conversion of a plain-number result, and the refusal of negative results.
func TestEvalPolicyExpr(t *testing.T) {
	cases := []struct {
		expr, input, want string // want: the quantity's String, or "err:<substring>"
	}{
		{"max(cpu*50%, 50m)", "600m", "300m"},
		{"memory*50%", "200Mi", "100Mi"},
		// the input is memory when the expression says "memory", cpu otherwise, whatever the
		// resource: a memory expression written with cpu works on the memory input...
		{"cpu*50%", "200Mi", "100Mi"},
		// ...and one that names both, or says MEMORY, finds one variable undefined
		{"cpu + memory", "1", "err:undefined variable: cpu"},
		{"MEMORY*2", "1Gi", "err:undefined variable: memory"},
		{"memory_x", "1Gi", "err:undefined variable: memory_x"},
		// a plain number is cores when the variable is cpu: int64(n*1000) milli-units, DecimalSI
		{"2", "1Gi", "2"},
		{"0.5", "1", "500m"},
		{"1024", "1Gi", "1024"},
		{"0.0015", "1", "1m"},
		{"200Mi", "5", "200Mi"},
		{"1e400", "1", "err:out of the range"},
		// negative results refuse
		{"cpu - 100m", "50m", "err:calculation result is negative: -50m"},
		{"-10", "1", "err:calculation result is negative"},
		{"0 - cpu", "0", "0"},
		{"cpu*cpu", "1", "err:multiplication of two quantities"},
		{"", "1", "err:syntax error"},
	}
	for _, tc := range cases {
		in := resource.MustParse(tc.input)
		before := in.DeepCopy()
		q, err := evalPolicyExpr(tc.expr, in)
		got := q.String()
		if err != nil {
			got = "err:" + err.Error()
		}
		if strings.HasPrefix(tc.want, "err:") {
			if err == nil || !strings.Contains(got, strings.TrimPrefix(tc.want, "err:")) {
				t.Errorf("evalPolicyExpr(%q, %s) = %s, want %s", tc.expr, tc.input, got, tc.want)
			}
		} else if got != tc.want {
			t.Errorf("evalPolicyExpr(%q, %s) = %s, want %s", tc.expr, tc.input, got, tc.want)
		}
		if in.Cmp(before) != 0 || in.String() != before.String() {
			t.Errorf("evalPolicyExpr(%q) changed its input", tc.expr)
		}
	}
}

// TestValidateResourceExpr: the SidecarSet webhook's check, the variable bound to the number 1.
func TestValidateResourceExpr(t *testing.T) {
	cases := []struct {
		expr string
		res  corev1.ResourceName
		want string // "" valid, or a substring of the error
	}{
		{"", corev1.ResourceCPU, ""},
		{"max(cpu*50%, 50m)", corev1.ResourceCPU, ""},
		{"max(memory*50%, 100Mi)", corev1.ResourceMemory, ""},
		{"200Mi", corev1.ResourceMemory, ""},
		{"cpu - 100m", corev1.ResourceCPU, ""}, // 1 core less 100m
		{"cpu*cpu", corev1.ResourceCPU, ""},    // 1*1: fine here, refused exprByteAt injection
		{"100m/cpu", corev1.ResourceCPU, ""},   // likewise
		{"100n", corev1.ResourceCPU, ""},       // 0, as in OpenKruise
		{"cpu - 2", corev1.ResourceCPU, "negative"},
		{"memory*50%", corev1.ResourceCPU, "undefined variable: memory"},
		{"cpu*50%", corev1.ResourceMemory, "undefined variable: cpu"},
		{"cpu/(cpu-1)", corev1.ResourceCPU, "division by zero"},
		{"  ", corev1.ResourceCPU, "syntax error"},
		{"disk", corev1.ResourceMemory, "undefined variable: disk"},
		{"1e3m", corev1.ResourceCPU, "invalid quantity"},
	}
	for _, tc := range cases {
		err := ValidateResourceExpr(tc.expr, tc.res)
		if tc.want == "" && err != nil {
			t.Errorf("ValidateResourceExpr(%q, %s): %v", tc.expr, tc.res, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ValidateResourceExpr(%q, %s) = %v, want an error with %q", tc.expr, tc.res, err, tc.want)
		}
	}
}
