package ordinal

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// The bounds of an Advanced StatefulSet's spec, shared by its validating webhook (which refuses a
// spec beyond them) and its controller (which leaves the pods of such a set alone and reports it,
// for what reached the API server while the webhook was off). They are far above any real set;
// they keep one object from making kruise-manager, which every workload of the cluster shares,
// allocate without bound.
const (
	// MaxReplicas bounds spec.replicas.
	MaxReplicas = 100000
	// MaxReserveEntries bounds the entries of spec.reserveOrdinals (an ordinal or a range each).
	MaxReserveEntries = 100
	// MaxReservedOrdinals bounds the ordinals spec.reserveOrdinals reserves in all, ordinals that
	// several entries reserve counted once (each range is also bounded by MaxReservedRange).
	MaxReservedOrdinals = 100000
)

// BoundError is a spec value beyond one of the bounds above.
type BoundError struct {
	// Field is the value's path: spec.replicas or spec.reserveOrdinals.
	Field string
	// Value is the spec's count of Unit; Bound the most accepted.
	Value, Bound int
	Unit         string
	// Why says why the bound exists.
	Why string
}

// Error names the field, the value, the bound and why.
func (e *BoundError) Error() string {
	return fmt.Sprintf("%s: %d %s, more than the %d accepted: %s", e.Field, e.Value, e.Unit, e.Bound, e.Why)
}

// CheckReplicas is the BoundError of a spec.replicas above MaxReplicas, or nil.
func CheckReplicas(replicas int32) *BoundError {
	if replicas <= MaxReplicas {
		return nil
	}
	return &BoundError{Field: "spec.replicas", Value: int(replicas), Bound: MaxReplicas, Unit: "replicas",
		Why: "kruise-manager tracks every replica of an Advanced StatefulSet, so larger sets are refused to keep a single object from exhausting the memory it shares with every workload of the cluster"}
}

// CheckReserveEntries is the BoundError of a spec.reserveOrdinals of more than MaxReserveEntries
// entries, or nil.
func CheckReserveEntries(entries int) *BoundError {
	if entries <= MaxReserveEntries {
		return nil
	}
	return &BoundError{Field: "spec.reserveOrdinals", Value: entries, Bound: MaxReserveEntries, Unit: "entries",
		Why: "each entry is an ordinal or a range 'first-last'; reserve neighbouring ordinals with one range"}
}

// CheckReservedCount is the BoundError of reserved ordinals more than MaxReservedOrdinals, or nil.
func CheckReservedCount(r Reserved) *BoundError {
	if n := r.Count(); n > MaxReservedOrdinals {
		return &BoundError{Field: "spec.reserveOrdinals", Value: n, Bound: MaxReservedOrdinals, Unit: "reserved ordinals",
			Why: "ordinals reserved by several entries count once; a set skips its reserved ordinals, and so many of them are no real set's"}
	}
	return nil
}

// Bounded are the ordinals of replicas replicas from start, skipping entries (reserveOrdinals), or
// why the spec cannot be run: an entry that does not read (ParseReserved) or a *BoundError. It
// allocates in proportion to the entries, and checks their number before reading them.
func Bounded(start, replicas int32, entries []intstr.IntOrString) (Replicas, error) {
	if e := CheckReplicas(replicas); e != nil {
		return Replicas{}, e
	}
	if e := CheckReserveEntries(len(entries)); e != nil {
		return Replicas{}, e
	}
	reserved, err := ParseReserved(entries)
	if err != nil {
		return Replicas{}, err
	}
	if e := CheckReservedCount(reserved); e != nil {
		return Replicas{}, e
	}
	return NewReplicas(start, replicas, reserved), nil
}
