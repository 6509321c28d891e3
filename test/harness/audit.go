package harness

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"
)

// AuditWrite is one request (a write, for AuditWrites) answered by the API server, from its audit
// log (ResponseComplete).
type AuditWrite struct {
	User, Verb, Resource, Subresource, Namespace, Name, RequestURI string
	// Code is the HTTP status of the answer.
	Code int
	// At is when the API server received the request.
	At time.Time
}

// OK reports whether the write succeeded (2xx).
func (w AuditWrite) OK() bool { return w.Code >= 200 && w.Code < 300 }

// auditEvent is the part of an audit event (audit.k8s.io/v1) the tests read.
type auditEvent struct {
	Stage      string    `json:"stage"`
	Received   time.Time `json:"requestReceivedTimestamp"`
	RequestURI string    `json:"requestURI"`
	Verb       string    `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// AuditSize is the audit log's current size: where the requests made from now on start.
func AuditSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// AuditWrites reads the audit log from offset and returns the writes of the users that user
// matches, dry runs left out (they write nothing).
func AuditWrites(path string, offset int64, user func(string) bool) ([]AuditWrite, error) {
	all, err := AuditRequests(path, offset, user)
	out := all[:0]
	for _, r := range all {
		if writeVerbs[r.Verb] && !strings.Contains(r.RequestURI, "dryRun=") {
			out = append(out, r)
		}
	}
	return out, err
}

// AuditRequests reads the audit log from offset and returns every answered request on a resource
// (reads and watches included) of the users that user matches.
func AuditRequests(path string, offset int64, user func(string) bool) ([]AuditWrite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []AuditWrite
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Stage != "ResponseComplete" || !user(e.User.Username) ||
			e.ObjectRef == nil || e.ResponseStatus == nil {
			continue
		}
		out = append(out, AuditWrite{User: e.User.Username, Verb: e.Verb, Resource: e.ObjectRef.Resource,
			Subresource: e.ObjectRef.Subresource, Namespace: e.ObjectRef.Namespace, Name: e.ObjectRef.Name,
			RequestURI: e.RequestURI, Code: e.ResponseStatus.Code, At: e.Received})
	}
	return out, sc.Err()
}
