package allocs

import (
	"math"
	"runtime"
)

// Bytes is how many bytes f allocates: the least of three runs, so that what the runtime
// allocates on its own now and then does not count.
func Bytes(f func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}
