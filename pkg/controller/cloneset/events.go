package cloneset

import (
	"fmt"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/podcontrol"
)

// refusalMessage says which pods InPlaceOnly leaves on the old revision and why, or "".
func refusalMessage(cs *v1alpha1.CloneSet, refusals []Refusal) string {
	if len(refusals) == 0 {
		return ""
	}
	names := make([]string, 0, len(refusals))
	for _, r := range refusals {
		names = append(names, r.Pod)
	}
	return fmt.Sprintf("%d pod(s) (%s) keep revision %s and are not deleted: %s; revert the template or use updateStrategy.type InPlaceIfPossible or ReCreate",
		len(refusals), podcontrol.ListNames(names, 3), cs.Status.CurrentRevision, refusals[0].Reason)
}
