package sidecarrules

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The expressions of a SidecarSet container's resourcesPolicy.resourcesExpr, read and evaluated
// as OpenKruise v1.9.0 does (its pkg/util/calculator, a goyacc grammar with a hand-written lexer):
//
//	expr   = term   { ("+" | "-") term }        left-associative
//	term   = factor { ("*" | "/") factor }      left-associative, binds tighter
//	factor = NUMBER | QUANTITY | name | "(" expr ")" | "-" factor
//	       | name "(" expr ")" | name "(" expr "," expr ")"
//
// Tokens are read byte by byte; a NUL byte ends the input and unicode.IsSpace bytes separate
// tokens. A token that starts with a digit or "." is a number: digits, at most one ".", an
// exponent ("e" or "E", an optional sign, digits), then either a "%" or a run of letters. It is a
// QUANTITY when that run of letters is exactly one of m k M G T P Ki Mi Gi Ti Pi (parsed by
// resource.ParseQuantity), and a NUMBER (a float64; "%" divides by 100) otherwise. As in
// OpenKruise, a NUMBER token that is not a valid float counts as 0: "100n", "5ki" and "." are 0.
// A token that starts with a letter is a name: letters, digits and "_". Names are
// case-insensitive; the functions are max and min, of exactly two arguments; the variables are
// cpu and memory. Any other character is a syntax error.
//
// Values are plain numbers or quantities. Numbers combine as float64. Where a number n meets a
// quantity in +, -, max or min, it becomes the quantity of int64(n*1000) milli-units (DecimalSI):
//   - q1 + q2, q1 - q2: resource.Quantity.Add (the left operand's format is kept, the right
//     one's when the left is zero);
//   - q * n, n * q, q / n: the milli-value of q multiplied (divided) by n in float64 and truncated
//     toward zero, in q's format; q1 * q2, x / q and x / 0 are errors;
//   - max and min compare with Quantity.Cmp and return an operand unchanged (the first on a tie).
//
// A result below zero is an error. Where OpenKruise converts a float64 that no int64 can hold
// (an overflow, an infinite or NaN value: there the outcome depends on the CPU), this
// implementation fails instead. Nesting deeper than maxExprDepth is refused.

// maxExprDepth bounds the nesting of parentheses, unary minus and function calls.
const maxExprDepth = 256

// exprUnits are the quantity suffixes the lexer accepts, as in OpenKruise (no E/Ei, no n/u).
var exprUnits = map[string]bool{
	"m": true, "k": true, "M": true, "G": true, "T": true, "P": true,
	"Ki": true, "Mi": true, "Gi": true, "Ti": true, "Pi": true,
}

// ResourceExpr is a parsed resourcesPolicy expression, ready to be evaluated any number of times.
type ResourceExpr struct {
	src  string
	root *exprNode
}

// String returns the expression as written.
func (e *ResourceExpr) String() string { return e.src }

// ParseResourceExpr parses one expression of resourcesPolicy.resourcesExpr (for instance
// "max(cpu*50%, 50m)"). It fails on what OpenKruise refuses whatever the values: a syntax error,
// an invalid quantity literal, a name other than cpu, memory, max and min, a function called with
// one argument. What depends on the value of the variable (a product of two quantities, a
// division by zero, a negative result, the variable that a resource may use) is left to
// evaluation; ValidateResourceExpr does the SidecarSet webhook's whole check.
func ParseResourceExpr(s string) (*ResourceExpr, error) {
	p := &exprParser{src: s}
	p.advance()
	root, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.unexpected()
	}
	return &ResourceExpr{src: s, root: root}, nil
}

// ValidateResourceExpr checks expression s of resource name (corev1.ResourceCPU or
// corev1.ResourceMemory) as OpenKruise's SidecarSet validating webhook does: an empty expression
// is valid; otherwise s must parse and evaluate, with the variable named like the resource (and
// only that one) bound to the plain number 1, to a result that is not negative.
func ValidateResourceExpr(s string, name corev1.ResourceName) error {
	if s == "" {
		return nil
	}
	e, err := ParseResourceExpr(s)
	if err != nil {
		return err
	}
	v, err := e.eval(map[string]exprValue{string(name): {n: 1}})
	if err != nil {
		return err
	}
	return checkNotNegative(v)
}

// memoryWord is how OpenKruise picks the variable an expression is given at injection.
var memoryWord = regexp.MustCompile(`\bmemory\b`)

// evalPolicyExpr evaluates expression s at injection, on input, the combined value of the target
// containers, as OpenKruise does: the input is bound to the variable memory when s contains the
// word "memory" (case-sensitive) and to cpu otherwise, whatever the resource; a result that is a
// plain number n becomes int64(n*1000) milli-units when that variable is cpu, int64(n) units when
// it is memory (DecimalSI).
func evalPolicyExpr(s string, input resource.Quantity) (resource.Quantity, error) {
	e, err := ParseResourceExpr(s)
	if err != nil {
		return resource.Quantity{}, err
	}
	name := "cpu"
	if memoryWord.MatchString(s) {
		name = "memory"
	}
	v, err := e.eval(map[string]exprValue{name: {isQty: true, q: input.DeepCopy()}})
	if err != nil {
		return resource.Quantity{}, err
	}
	if err := checkNotNegative(v); err != nil {
		return resource.Quantity{}, err
	}
	if v.isQty {
		return v.q.DeepCopy(), nil
	}
	if name == "cpu" {
		m, err := exprFloatToInt64(v.n * 1000)
		if err != nil {
			return resource.Quantity{}, err
		}
		return *resource.NewMilliQuantity(m, resource.DecimalSI), nil
	}
	n, err := exprFloatToInt64(v.n)
	if err != nil {
		return resource.Quantity{}, err
	}
	return *resource.NewQuantity(n, resource.DecimalSI), nil
}

func checkNotNegative(v exprValue) error {
	if v.isQty && v.q.Sign() < 0 {
		return fmt.Errorf("calculation result is negative: %s", v.q.String())
	}
	if !v.isQty && v.n < 0 {
		return fmt.Errorf("calculation result is negative: %g", v.n)
	}
	return nil
}

// --- lexer ---

type exprTokKind int

const (
	tokEOF exprTokKind = iota
	tokNumber
	tokQuantity
	tokName
	tokPunct // one of + - * / ( ) ,
	tokBad
)

type exprToken struct {
	kind exprTokKind
	text string
	pos  int
}

// exprByteAt returns the byte at i, 0 past the end (a NUL byte ends the input, as in OpenKruise).
func exprByteAt(s string, i int) byte {
	if i >= len(s) {
		return 0
	}
	return s[i]
}

// exprIsLetter, exprIsDigit and exprIsSpace classify one byte as OpenKruise's lexer does: as
// the rune of the same value (so bytes above 0x7f are read as Latin-1).
func exprIsLetter(b byte) bool { return unicode.IsLetter(rune(b)) }
func exprIsDigit(b byte) bool  { return unicode.IsDigit(rune(b)) }
func exprIsSpace(b byte) bool  { return unicode.IsSpace(rune(b)) }

func exprLex(s string, pos int) exprToken {
	for b := exprByteAt(s, pos); b != 0 && exprIsSpace(b); b = exprByteAt(s, pos) {
		pos++
	}
	b := exprByteAt(s, pos)
	switch {
	case b == 0:
		return exprToken{kind: tokEOF, pos: pos}
	case strings.IndexByte("+-*/(),", b) >= 0:
		return exprToken{kind: tokPunct, text: s[pos : pos+1], pos: pos}
	case b == '.' || exprIsDigit(b):
		end := exprScanNumber(s, pos)
		text := s[pos:end]
		if exprIsQuantityToken(text) {
			return exprToken{kind: tokQuantity, text: text, pos: pos}
		}
		return exprToken{kind: tokNumber, text: text, pos: pos}
	case exprIsLetter(b):
		end := pos
		for c := exprByteAt(s, end); c != 0 && (exprIsLetter(c) || exprIsDigit(c) || c == '_'); c = exprByteAt(s, end) {
			end++
		}
		return exprToken{kind: tokName, text: s[pos:end], pos: pos}
	}
	return exprToken{kind: tokBad, text: s[pos : pos+1], pos: pos}
}

// exprScanNumber returns the end of the number token starting at pos.
func exprScanNumber(s string, pos int) int {
	var dot, exp, expectDigit bool
	for {
		b := exprByteAt(s, pos)
		switch {
		case b == 0:
			return pos
		case exprIsDigit(b):
			expectDigit = false
		case b == '.':
			if dot || exp {
				return pos
			}
			dot = true
		case b == 'e' || b == 'E':
			if exp {
				return pos
			}
			exp, expectDigit = true, true
		case b == '+' || b == '-':
			if !expectDigit {
				return pos
			}
			expectDigit = false
		case b == '%':
			return pos + 1
		case exprIsLetter(b):
			if expectDigit {
				return pos
			}
			for exprIsLetter(exprByteAt(s, pos)) {
				pos++
			}
			return pos
		default:
			return pos
		}
		pos++
	}
}

// exprIsQuantityToken tells a QUANTITY from a NUMBER: the letters after the numeric part must be
// exactly a known unit.
func exprIsQuantityToken(text string) bool {
	for i, r := range text { // by rune, as OpenKruise does
		if !unicode.IsDigit(r) && !strings.ContainsRune(".eE+-", r) {
			return i > 0 && exprUnits[text[i:]]
		}
	}
	return false
}

// exprNumberValue is the value of a NUMBER token, as OpenKruise computes it: strconv.ParseFloat's
// result even when it reports an error (0 for a malformed token, ±Inf past the float64 range), a
// percentage divided by 100 (0 when malformed or out of range).
func exprNumberValue(text string) float64 {
	if rest, ok := strings.CutSuffix(text, "%"); ok {
		n, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			return 0
		}
		return n / 100
	}
	n, _ := strconv.ParseFloat(text, 64)
	return n
}

// --- parser ---

type exprNode struct {
	// op is 'n' number, 'q' quantity, 'v' variable, 'u' unary minus, '+', '-', '*', '/',
	// 'x' max or 'i' min.
	op   byte
	num  float64
	qty  resource.Quantity
	name string // variable name, lower case
	l, r *exprNode
}

type exprParser struct {
	src   string
	tok   exprToken
	depth int
}

func (p *exprParser) advance() {
	end := p.tok.pos + len(p.tok.text)
	p.tok = exprLex(p.src, end)
}

func (p *exprParser) is(punct byte) bool {
	return p.tok.kind == tokPunct && p.tok.text[0] == punct
}

func (p *exprParser) unexpected() error {
	if p.tok.kind == tokEOF {
		return fmt.Errorf("syntax error: unexpected end of expression")
	}
	return fmt.Errorf("syntax error: unexpected %q at offset %d", p.tok.text, p.tok.pos)
}

func (p *exprParser) expr() (*exprNode, error) { return p.binary(p.term, '+', '-') }

func (p *exprParser) term() (*exprNode, error) { return p.binary(p.factor, '*', '/') }

// binary parses a left-associative chain of next separated by any of ops.
func (p *exprParser) binary(next func() (*exprNode, error), ops ...byte) (*exprNode, error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for p.isAny(ops) {
		op := p.tok.text[0]
		p.advance()
		r, err := next()
		if err != nil {
			return nil, err
		}
		l = &exprNode{op: op, l: l, r: r}
	}
	return l, nil
}

// isAny reports whether the current token is one of ops.
func (p *exprParser) isAny(ops []byte) bool {
	for _, op := range ops {
		if p.is(op) {
			return true
		}
	}
	return false
}

func (p *exprParser) factor() (*exprNode, error) {
	if p.depth++; p.depth > maxExprDepth {
		return nil, fmt.Errorf("expression nested deeper than %d", maxExprDepth)
	}
	defer func() { p.depth-- }()
	t := p.tok
	switch {
	case t.kind == tokNumber:
		p.advance()
		return &exprNode{op: 'n', num: exprNumberValue(t.text)}, nil
	case t.kind == tokQuantity:
		q, err := resource.ParseQuantity(t.text)
		if err != nil {
			return nil, fmt.Errorf("invalid quantity %q: %v", t.text, err)
		}
		p.advance()
		return &exprNode{op: 'q', qty: q}, nil
	case t.kind == tokName:
		p.advance()
		if p.is('(') {
			return p.call(t)
		}
		name := strings.ToLower(t.text)
		if name != "cpu" && name != "memory" {
			return nil, fmt.Errorf("undefined variable: %s", t.text)
		}
		return &exprNode{op: 'v', name: name}, nil
	case p.is('('):
		p.advance()
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.is(')') {
			return nil, p.unexpected()
		}
		p.advance()
		return e, nil
	case p.is('-'):
		p.advance()
		e, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &exprNode{op: 'u', l: e}, nil
	}
	return nil, p.unexpected()
}

// call parses the arguments of function fn, the current token being its "(".
func (p *exprParser) call(fn exprToken) (*exprNode, error) {
	p.advance()
	a, err := p.expr()
	if err != nil {
		return nil, err
	}
	var b *exprNode
	if p.is(',') {
		p.advance()
		if b, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if !p.is(')') {
		return nil, p.unexpected()
	}
	p.advance()
	var op byte
	switch name := strings.ToLower(fn.text); name {
	case "max":
		op = 'x'
	case "min":
		op = 'i'
	default:
		return nil, fmt.Errorf("unknown function: %s", fn.text)
	}
	if b == nil {
		return nil, fmt.Errorf("%s function requires exactly 2 arguments, got 1", strings.ToLower(fn.text))
	}
	return &exprNode{op: op, l: a, r: b}, nil
}

// --- evaluation ---

type exprValue struct {
	isQty bool
	n     float64
	q     resource.Quantity
}

var errNotInt64 = errors.New("value out of the range of a quantity")

// exprFloatToInt64 truncates f toward zero, and fails where Go's conversion is not defined.
func exprFloatToInt64(f float64) (int64, error) {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return 0, errNotInt64
	}
	return int64(f), nil
}

// exprAsQuantity is OpenKruise's number-to-quantity conversion: n units as int64(n*1000)
// milli-units.
func exprAsQuantity(v exprValue) (resource.Quantity, error) {
	if v.isQty {
		return v.q.DeepCopy(), nil
	}
	m, err := exprFloatToInt64(v.n * 1000)
	if err != nil {
		return resource.Quantity{}, err
	}
	return *resource.NewMilliQuantity(m, resource.DecimalSI), nil
}

// exprScale is q*f (or q/f), in milli-units truncated toward zero, in q's format.
func exprScale(q resource.Quantity, f float64, divide bool) (exprValue, error) {
	m := float64(q.MilliValue())
	if divide {
		m /= f
	} else {
		m *= f
	}
	n, err := exprFloatToInt64(m)
	if err != nil {
		return exprValue{}, err
	}
	out := q.DeepCopy()
	out.SetMilli(n)
	return exprValue{isQty: true, q: out}, nil
}

func (e *ResourceExpr) eval(vars map[string]exprValue) (exprValue, error) {
	return evalNode(e.root, vars)
}

// evalNode evaluates n. The left operands of a chain of operations ("1+2+3+...") are walked in a
// loop, so that the depth of recursion is that of the nesting (bounded by maxExprDepth), not the
// length of the expression.
func evalNode(n *exprNode, vars map[string]exprValue) (exprValue, error) {
	var spine []*exprNode
	for n.l != nil && n.r != nil {
		spine = append(spine, n)
		n = n.l
	}
	v, err := evalLeaf(n, vars)
	for i := len(spine) - 1; i >= 0 && err == nil; i-- {
		var r exprValue
		if r, err = evalNode(spine[i].r, vars); err == nil {
			v, err = exprCombine(spine[i].op, v, r)
		}
	}
	return v, err
}

// evalLeaf evaluates a node of no more than one operand.
func evalLeaf(n *exprNode, vars map[string]exprValue) (exprValue, error) {
	switch n.op {
	case 'n':
		return exprValue{n: n.num}, nil
	case 'q':
		return exprValue{isQty: true, q: n.qty.DeepCopy()}, nil
	case 'v':
		v, ok := vars[n.name]
		if !ok {
			return exprValue{}, fmt.Errorf("undefined variable: %s", n.name)
		}
		if v.isQty {
			v.q = v.q.DeepCopy()
		}
		return v, nil
	case 'u':
		v, err := evalNode(n.l, vars)
		if err != nil {
			return exprValue{}, err
		}
		if v.isQty {
			v.q.Neg()
		} else {
			v.n = -v.n
		}
		return v, nil
	}
	return exprValue{}, fmt.Errorf("unknown operation %q", n.op)
}

// exprCombine applies binary operation op (+ - * / max min) to l and r.
func exprCombine(op byte, l, r exprValue) (exprValue, error) {
	switch op {
	case '+', '-':
		if !l.isQty && !r.isQty {
			if op == '+' {
				return exprValue{n: l.n + r.n}, nil
			}
			return exprValue{n: l.n - r.n}, nil
		}
		lq, err := exprAsQuantity(l)
		if err != nil {
			return exprValue{}, err
		}
		rq, err := exprAsQuantity(r)
		if err != nil {
			return exprValue{}, err
		}
		if op == '-' {
			rq.Neg()
		}
		lq.Add(rq)
		return exprValue{isQty: true, q: lq}, nil
	case '*':
		switch {
		case l.isQty && r.isQty:
			return exprValue{}, errors.New("multiplication of two quantities")
		case l.isQty:
			return exprScale(l.q, r.n, false)
		case r.isQty:
			return exprScale(r.q, l.n, false)
		}
		return exprValue{n: l.n * r.n}, nil
	case '/':
		if r.isQty {
			return exprValue{}, errors.New("division by quantity")
		}
		if r.n == 0 {
			return exprValue{}, errors.New("division by zero")
		}
		if l.isQty {
			return exprScale(l.q, r.n, true)
		}
		return exprValue{n: l.n / r.n}, nil
	case 'x', 'i':
		return exprPick(l, r, op == 'x')
	}
	return exprValue{}, fmt.Errorf("unknown operation %q", op)
}

// exprPick is max (wantMax) or min of l and r: the left one on a tie; a number facing a quantity is
// compared, and returned, as a quantity.
func exprPick(l, r exprValue, wantMax bool) (exprValue, error) {
	if !l.isQty && !r.isQty {
		if (wantMax && l.n >= r.n) || (!wantMax && l.n <= r.n) {
			return l, nil
		}
		return r, nil
	}
	lq, err := exprAsQuantity(l)
	if err != nil {
		return exprValue{}, err
	}
	rq, err := exprAsQuantity(r)
	if err != nil {
		return exprValue{}, err
	}
	c := lq.Cmp(rq)
	if (wantMax && c >= 0) || (!wantMax && c <= 0) {
		return exprValue{isQty: true, q: lq}, nil
	}
	return exprValue{isQty: true, q: rq}, nil
}
