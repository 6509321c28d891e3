package cachetrim

import (
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
)

// maxInterned bounds the strings a Pool holds; when it is reached the pool starts afresh (the
// strings already shared stay shared, they are only no longer handed out).
const maxInterned = 1 << 16

// Pool hands out one copy of each string it is given, so that equal strings of different objects
// share their bytes: the strings of a decoded object are each a copy of their own. The zero Pool
// is ready to use.
type Pool struct {
	mu      sync.Mutex
	strings map[string]string
}

// Intern returns the pool's copy of s.
func (p *Pool) Intern(s string) string {
	if s == "" {
		return s
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.strings[s]; ok {
		return c
	}
	if p.strings == nil || len(p.strings) >= maxInterned {
		p.strings = make(map[string]string, 1024)
	}
	p.strings[s] = s
	return s
}

// internMap interns the keys and values of m in place (assigning to a key of equal content
// replaces the map's key, so no entry is added during the range).
func (p *Pool) internMap(m map[string]string) {
	for k, v := range m {
		m[p.Intern(k)] = p.Intern(v)
	}
}

// Then returns the informer transform that runs first and then, for the objects it knows (pods),
// shares their repeated strings through p.
func (p *Pool) Then(first toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if first != nil {
			var err error
			if obj, err = first(obj); err != nil {
				return obj, err
			}
		}
		p.object(obj)
		return obj, nil
	}
}
