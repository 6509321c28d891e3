package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kruise-ng/kruise/test/harness"
)

// tallyRequests (-requests): each scenario also counts every client's requests, reads and watches
// included, from the audit log: where the API server's CPU went beyond the writer's writes (the
// fake kubelets' writes, informers' relists, a webhook's reviews).
var tallyRequests bool

// requestsShown is how many of a scenario's request kinds printRequests prints, the most first.
const requestsShown = 12

// tallyFrom counts the requests in the audit log from offset by client, verb and resource.
func tallyFrom(path string, offset int64) (map[string]int, error) {
	reqs, err := harness.AuditRequests(path, offset, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range reqs {
		res := r.Resource
		if r.Subresource != "" {
			res += "/" + r.Subresource
		}
		out[shortUser(r.User)+" "+r.Verb+" "+res]++
	}
	return out, nil
}

// shortUser drops the service-account prefix of kube-controller-manager's controllers.
func shortUser(u string) string { return strings.TrimPrefix(u, "system:serviceaccount:kube-system:") }

// printRequests prints, per scenario that tallied them, its most frequent requests per pod.
func printRequests(results []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	printed := false
	for _, r := range results {
		if r.Requests == nil {
			continue
		}
		if !printed {
			fmt.Fprintln(tw, "scenario\trequests/pod\tclient verb resource\t")
			printed = true
		}
		keys := make([]string, 0, len(r.Requests))
		total := 0
		for k, v := range r.Requests {
			keys = append(keys, k)
			total += v
		}
		slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(r.Requests[b], r.Requests[a]), cmp.Compare(a, b)) })
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t\n", r.Scenario, float64(total)/float64(r.N), "(all)")
		for _, k := range keys[:min(len(keys), requestsShown)] {
			fmt.Fprintf(tw, "\t%.2f\t%s\t\n", float64(r.Requests[k])/float64(r.N), k)
		}
	}
	_ = tw.Flush()
}
