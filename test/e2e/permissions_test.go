package e2e

import (
	"context"
	"flag"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// managerPermissionsNotExercised are kruise-manager's permissions that the e2e suite does not use,
// each with the code path that needs it.
var managerPermissionsNotExercised = map[string]string{
	// The OwnerReferencesPermissionEnforcement admission plugin checks these when an object is
	// written with a blockOwnerDeletion owner reference (metav1.NewControllerRef); no request uses them.
	"update apps.kruise.io/clonesets/finalizers":             "OwnerReferencesPermissionEnforcement: pkg/controller/cloneset owner references (NewControllerRef) on the pods of createPod (pkg/machinery/podcontrol Create) and the adoption patch (pkg/machinery/podcontrol Adopt), the claims of apply_claims.go, the revisions of applyRevision and the ImagePullJobs of syncPreDownload (pkg/machinery/predownload)",
	"update apps.kruise.io/statefulsets/finalizers":          "OwnerReferencesPermissionEnforcement: pkg/machinery/podcontrol Create and Adopt (NewControllerRef) on the pods of pkg/controller/statefulset, its revisions (pkg/core/revision New)",
	"update apps.kruise.io/sidecarsets/finalizers":           "OwnerReferencesPermissionEnforcement: pkg/controller/sidecarset createRevision (NewControllerRef) on the SidecarSet's revisions",
	"update apps.kruise.io/daemonsets/finalizers":            "OwnerReferencesPermissionEnforcement: pkg/machinery/podcontrol Create and Adopt (NewControllerRef) on the pods of pkg/controller/daemonset, its revisions (pkg/core/revision New) and the ImagePullJobs of syncPreDownload (pkg/machinery/predownload)",
	"update apps.kruise.io/broadcastjobs/finalizers":         "OwnerReferencesPermissionEnforcement: pkg/controller/broadcastjob pods.go NewPod (NewControllerRef) on the job's pods",
	"update apps.kruise.io/advancedcronjobs/finalizers":      "OwnerReferencesPermissionEnforcement: pkg/controller/advancedcronjob/children.go newChild, the owner reference (NewControllerRef) of each Job, BroadcastJob and ImageListPullJob a cron job creates",
	"update apps.kruise.io/uniteddeployments/finalizers":     "OwnerReferencesPermissionEnforcement: pkg/controller/uniteddeployment build.go (NewControllerRef) on the subset workloads it creates, and its revisions (pkg/core/revision New)",
	"update core/pods/finalizers":                            "OwnerReferencesPermissionEnforcement: pkg/controller/sidecarterminator Reconcile (NewControllerRef), the pod as owner of the ContainerRecreateRequest that stops its sidecars",
	"update apps.kruise.io/resourcedistributions/finalizers": "OwnerReferencesPermissionEnforcement: pkg/core/distributionrules Want (NewControllerRef), the owner reference of each copy pkg/controller/resourcedistribution creates",
	"update apps.kruise.io/imagelistpulljobs/finalizers":     "OwnerReferencesPermissionEnforcement: pkg/controller/imagelistpulljob/plan.go Child, the owner reference (NewControllerRef) of each ImagePullJob a list creates",

	// Paths that need kruise-daemon (the kwok nodes have none): run by test/e2enode TestRealNode.
	"get core/pods": "pkg/webhook/defaulting/crr.go crrDefaulter.Default reads the request's pod through the manager's API reader (uncached); e2e-node TestRealNode \"a ContainerRecreateRequest restarts one container of a running pod\" (containerRecreate)",
	"create apps.kruise.io/containerrecreaterequests":        "pkg/machinery/engine/recreate.go ensureRecreate (CloneSet in-place update whose env reads changed metadata, InPlaceUpdateEnvFromMetadata) and pkg/controller/sidecarterminator Reconcile (a job pod's sidecars stopped); e2e-node TestRealNode \"an annotation read into env restarts the container in place\" (envFromMetadataInPlace) and \"a Job whose main container exits completes: its sidecar is stopped\" (sidecarTerminatorJob)",
	"patch apps.kruise.io/containerrecreaterequests":         "pkg/controller/crr patchAcquired (unready-acquired annotation and finalizer) and patchMetadata (active label) in finished; e2e-node TestRealNode \"a ContainerRecreateRequest restarts one container of a running pod\" (containerRecreate)",
	"update apps.kruise.io/containerrecreaterequests/status": "pkg/controller/crr Reconcile (phase Pending) and complete, Status().Update; e2e-node TestRealNode \"a ContainerRecreateRequest restarts one container of a running pod\" (containerRecreate)",
	"delete apps.kruise.io/containerrecreaterequests":        "pkg/controller/crr finished: deletes an ended request at its ttlSecondsAfterFinished; no test waits for a TTL (e2e-node containerRecreate uses 600s)",
	"patch core/pods/resize":                                 "pkg/machinery/engine/engine.go resize (InPlaceWorkloadVerticalScaling, SubResource(\"resize\").Patch); e2e-node TestRealNode \"a CPU change resizes the container in place\" (resizeInPlace)",
	"create apps.kruise.io/imagepulljobs":                    "pkg/machinery/predownload Sync (from the CloneSet and Advanced StatefulSet syncPreDownload) and pkg/controller/imagelistpulljob Reconcile (plan.Create); e2e-node TestRealNode \"a CloneSet pre-downloads its new image before the pods are updated\" (cloneSetPreDownload) and \"an ImageListPullJob pulls each of its images\" (imageListPull)",
	"delete apps.kruise.io/imagepulljobs":                    "pkg/machinery/predownload deleteJobs (CloneSet and Advanced StatefulSet), pkg/controller/imagepulljob Reconcile (plan.Delete, ttlSecondsAfterFinished) and pkg/controller/imagelistpulljob Reconcile (plan.Delete: images dropped from the list); e2e-node TestRealNode \"a CloneSet pre-downloads its new image before the pods are updated\" (cloneSetPreDownload)",
	"update apps.kruise.io/imagepulljobs":                    "pkg/controller/imagelistpulljob Reconcile (plan.Update: an unfinished job whose list's template changed); no e2e test, the plan is unit-tested (TestPlanList)",
	"update apps.kruise.io/imagepulljobs/status":             "pkg/controller/imagepulljob Reconcile, Status().Update; e2e-node TestRealNode \"an ImagePullJob pulls onto the real node with its pull secret\" (pullJobWithSecret)",
	"update apps.kruise.io/nodeimages":                       "pkg/controller/imagepulljob Reconcile (AddJob, RemoveOwners) and releaseAll, pkg/controller/nodeimage dropTags (ttlSecondsAfterFinished of a tag); e2e-node TestRealNode \"an ImagePullJob pulls onto the real node with its pull secret\" (pullJobWithSecret)",
	"update apps.kruise.io/imagelistpulljobs/status":         "pkg/controller/imagelistpulljob Reconcile, Status().Update; e2e-node TestRealNode \"an ImageListPullJob pulls each of its images\" (imageListPull)",
	"delete apps.kruise.io/imagelistpulljobs":                "pkg/controller/imagelistpulljob Reconcile (plan.DeleteList: the list's ttlSecondsAfterFinished); no e2e test, the plan is unit-tested (TestPlanList)",
	"patch apps/controllerrevisions":                         "pkg/machinery/predownload labelRevision (the pre-download decision's label, CloneSet and Advanced StatefulSet); e2e-node TestRealNode \"a CloneSet pre-downloads its new image before the pods are updated\" (cloneSetPreDownload)",

	"delete core/secrets": "pkg/controller/imagepulljob/secrets.go collectSecrets (a pull secret's copy in kruise-daemon-config removed with the last job using it) and syncSecrets (a copy whose type changed); e2e-node TestRealNode \"an ImagePullJob pulls onto the real node with its pull secret\" (pullJobWithSecret)",

	// Wildcard grants: the checker matches grants to audited requests resource by resource, and a
	// wildcard has none of its own.
	"list */*":      "pkg/webhook/deletionprotection customResources: a CustomResourceDefinition labelled Cascading lists its custom resources, of any group; TestDeletionProtection lists those of its throwaway CRD through it",
	"get */*/scale": "pkg/machinery/workloadfinder findScale: a PodUnavailableBudget whose targetRef is a kind the finder does not know reads its scale subresource; TestPodUnavailableBudgetCountsAWorkload reads a ReplicationController's through it",

	// Paths the suite does not reach.
	"get apps.kruise.io/daemonsets":   "pkg/machinery/podcontrol CanAdopt (from Control.Adopt and AdoptRevisions): an Advanced DaemonSet about to adopt orphaned pods or revisions (created again after a deletion with propagation Orphan) reads itself around the cache, so that one being deleted adopts nothing; no e2e test adopts into an Advanced DaemonSet (the fault campaign, test/soak, deletes and re-creates its agent); unit-tested (TestAdoptRevisionsWaitsForThePredecessor)",
	"delete apps/controllerrevisions": "pkg/controller/cloneset/apply.go pruneRevisions: revisions beyond spec.revisionHistoryLimit (default 10; no e2e test makes that many); the choice is unit-tested (pkg/core/revision TestToDelete)",
}

// checkManagerPermissions fails when kruise-manager may do something no request of the whole e2e
// suite did (read from the API server's audit log): every verb it is granted is one its code uses.
// It runs after the whole suite only (a -run filter exercises less).
func checkManagerPermissions() error {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return nil
	}
	cfg, err := sb.RESTConfig()
	if err != nil {
		return err
	}
	return harness.CheckPermissionsUsed(context.Background(), cfg, sb.AuditLog, sandbox.KruiseManagerUser, nil,
		[]string{sandbox.KruiseNamespace, appspub.KruiseDaemonConfigNamespace, "default"}, managerPermissionsNotExercised)
}
