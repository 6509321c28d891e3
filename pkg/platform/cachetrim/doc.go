// Package cachetrim shapes what kruise-manager's informer cache keeps of each object: less memory
// per cached pod, with nothing a controller reads taken away.
package cachetrim
