package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
)

// writeCounts are the successful writes and the conflicts of a set of users, from the API server's
// audit log: only the client certificates (or service accounts) named, so the fake kubelets' status
// writes never count.
type writeCounts struct {
	PodWrites   int // pods and pods/* (status, resize, …): create, update, patch, delete
	OtherWrites int // everything else: the workload's status, revisions, events, leases, …
	Conflicts   int // 409 answers to any of those users' requests
	ByResource  map[string]int
}

type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// auditSize is the audit log's current size: where a scenario's requests start.
func auditSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// countWrites reads the audit log from offset and counts the writes of the given users.
func countWrites(path string, offset int64, users func(string) bool) (writeCounts, error) {
	out := writeCounts{ByResource: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return out, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Stage != "ResponseComplete" || !users(e.User.Username) ||
			!writeVerbs[e.Verb] || e.ObjectRef == nil || e.ResponseStatus == nil {
			continue
		}
		if strings.Contains(e.RequestURI, "dryRun=") {
			continue // validation by dry run (the CloneSet webhook's template check) writes nothing
		}
		if e.ResponseStatus.Code == 409 {
			out.Conflicts++
			continue
		}
		if e.ResponseStatus.Code < 200 || e.ResponseStatus.Code >= 300 {
			continue
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		out.ByResource[e.Verb+" "+res]++
		if e.ObjectRef.Resource == "pods" {
			out.PodWrites++
		} else {
			out.OtherWrites++
		}
	}
	return out, sc.Err()
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
