package main

import "github.com/kruise-ng/kruise/test/harness"

// writeCounts are the successful writes and the conflicts of a set of users, from the API server's
// audit log: only the client certificates (or service accounts) named, so the fake kubelets' status
// writes never count.
type writeCounts struct {
	PodWrites   int // pods and pods/* (status, resize, …): create, update, patch, delete
	OtherWrites int // everything else: the workload's status, revisions, events, leases, …
	Conflicts   int // 409 answers to any of those users' requests
	ByResource  map[string]int
}

// countWrites reads the audit log from offset and counts the writes of the given users.
func countWrites(path string, offset int64, users func(string) bool) (writeCounts, error) {
	out := writeCounts{ByResource: map[string]int{}}
	writes, err := harness.AuditWrites(path, offset, users)
	if err != nil {
		return out, err
	}
	for _, w := range writes {
		if w.Code == 409 {
			out.Conflicts++
			continue
		}
		if !w.OK() {
			continue
		}
		res := w.Resource
		if w.Subresource != "" {
			res += "/" + w.Subresource
		}
		out.ByResource[w.Verb+" "+res]++
		if w.Resource == "pods" {
			out.PodWrites++
		} else {
			out.OtherWrites++
		}
	}
	return out, nil
}

// isUser matches one user name.
func isUser(name string) func(string) bool { return func(u string) bool { return u == name } }

// isServiceAccountOf matches kube-controller-manager's per-controller service accounts (it runs
// with --use-service-account-credentials).
func isServiceAccountOf(controllers ...string) func(string) bool {
	return func(u string) bool {
		for _, c := range controllers {
			if u == "system:serviceaccount:kube-system:"+c {
				return true
			}
		}
		return false
	}
}
