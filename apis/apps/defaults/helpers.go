package defaults

import "k8s.io/apimachinery/pkg/util/intstr"

// The helpers below only ever fill a field that is unset (nil pointer or
// empty string). They never replace a value the user wrote, including an
// explicit zero held in a pointer, which keeps every SetDefaults function
// idempotent.

func defaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}

func defaultBool(p **bool, v bool) {
	if *p == nil {
		*p = &v
	}
}

func defaultIntOrString(p **intstr.IntOrString, v intstr.IntOrString) {
	if *p == nil {
		*p = &v
	}
}

func defaultString[T ~string](p *T, v T) {
	if *p == "" {
		*p = v
	}
}

// defaultZeroInt32 fills a non-pointer int32 whose zero value is not a legal
// setting (for example probe periods, whose minimum is 1), so zero can only
// mean "not given".
func defaultZeroInt32(p *int32, v int32) {
	if *p == 0 {
		*p = v
	}
}
