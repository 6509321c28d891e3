package cloneset

import (
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// refusalMessage says which pods InPlaceOnly leaves on the old revision and why, or "".
func refusalMessage(cs *v1alpha1.CloneSet, refusals []Refusal) string {
	return podcontrol.RefusalMessage(refusals, "revision "+cs.Status.CurrentRevision,
		"revert the template or use updateStrategy.type InPlaceIfPossible or ReCreate")
}
