package validating

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/webhook/internal/webhookfuzz"
)

// Hand-written seeds beside the generic ones (a minimal object of each kind, truncated, wrong
// types): objects that pass decoding and reach the validation rules.
var fuzzSamples = []string{
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"EphemeralJob","metadata":{"name":"ej","namespace":"ns"},
	  "spec":{"selector":{"matchLabels":{"app":"a"}},"replicas":2,"parallelism":1,"activeDeadlineSeconds":60,"ttlSecondsAfterFinished":10,
	    "template":{"ephemeralContainers":[{"name":"debug","image":"busybox","command":["sh","-c","exit 0"],"env":[{"name":"A","value":"1"}],
	      "volumeMounts":[{"name":"data","mountPath":"/d"}],"targetContainerName":"app"}]}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"name":"ok","namespace":"ns"},
	  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"a"}},
	    "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"app","image":"app:v1"}]}}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"name":"cs","namespace":"ns","uid":"cs-uid"},
	  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"a"}},
	    "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"app","image":"app:v1","volumeMounts":[{"name":"data","mountPath":"/d"}]}]}},
	    "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],
	    "scaleStrategy":{"podsToDelete":["p","gone"],"maxUnavailable":1},
	    "updateStrategy":{"type":"InPlaceIfPossible","maxUnavailable":"20%","maxSurge":1,"partition":"50%",
	      "inPlaceUpdateStrategy":{"gracePeriodSeconds":5},"priorityStrategy":{"weightPriority":[{"weight":10,"matchSelector":{"matchLabels":{"a":"b"}}}]}},
	    "lifecycle":{"preDelete":{"finalizersHandler":["example.com/hook"]}},"minReadySeconds":5,"revisionHistoryLimit":3}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","metadata":{"name":"db","namespace":"ns"},
	  "spec":{"replicas":3,"serviceName":"db","podManagementPolicy":"Parallel","selector":{"matchLabels":{"app":"a"}},
	    "template":{"metadata":{"labels":{"app":"a"}},"spec":{"readinessGates":[{"conditionType":"InPlaceUpdateReady"}],
	      "containers":[{"name":"app","image":"app:v1","volumeMounts":[{"name":"data","mountPath":"/d"}]}]}},
	    "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],
	    "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":1,"maxUnavailable":"50%","podUpdatePolicy":"InPlaceOnly",
	      "minReadySeconds":10,"inPlaceUpdateStrategy":{"gracePeriodSeconds":5},
	      "unorderedUpdate":{"priorityStrategy":{"weightPriority":[{"weight":10,"matchSelector":{"matchLabels":{"a":"b"}}}]}}}},
	    "reserveOrdinals":[1,"3-5"],"ordinals":{"start":2},"scaleStrategy":{"maxUnavailable":2},
	    "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Retain"},
	    "volumeClaimUpdateStrategy":{"type":"OnPodRollingUpdate"},"revisionHistoryLimit":5}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"StatefulSet","metadata":{"name":"db","namespace":"ns",
	    "annotations":{"apps.kruise.io/conversion-v1beta1-only":"{\"spec\":{\"reserveOrdinals\":[\"2-1\"],\"ordinals\":{\"start\":1}}}"}},
	  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},
	    "spec":{"containers":[{"name":"app","image":"app:v1"}]}},"updateStrategy":{"type":"OnDelete"}}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"ns"},
	  "spec":{"selector":{"matchLabels":{"app":"a"}},"burstReplicas":"50%","minReadySeconds":5,"revisionHistoryLimit":3,
	    "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"app","image":"app:v1","ports":[{"containerPort":80,"hostPort":80}]}]}},
	    "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"rollingUpdateType":"Standard","maxUnavailable":0,"maxSurge":"10%",
	      "partition":"50%","paused":false,"selector":{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}}},
	    "scaleStrategy":{"partitionedScaling":true},"lifecycle":{"preDelete":{"finalizersHandler":["example.com/hook"]}}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"ns",
	    "annotations":{"daemonset.kruise.io/progressive-create-pod":"true","apps.kruise.io/conversion-v1beta1-only":"{\"metadata\":{\"progressiveCreatePod\":null}}"}},
	  "spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"app","image":"app:v1"}]}},
	    "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"rollingUpdateType":"Surging","maxUnavailable":0,"partition":2}}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ContainerRecreateRequest","metadata":{"name":"r","namespace":"ns",
	    "labels":{"crr.apps.kruise.io/pod-uid":"uid"}},
	  "spec":{"podName":"p","containers":[{"name":"app"},{"name":"app","preStop":{"exec":{"command":["x"]},"tcpSocket":{"port":1}}}],
	    "strategy":{"failurePolicy":"Ignore","unreadyGracePeriodSeconds":-1},"activeDeadlineSeconds":0,"ttlSecondsAfterFinished":60}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"ImagePullJob","metadata":{"name":"j","namespace":"ns"},
	  "spec":{"image":"127.0.0.1:5000/app:v2","parallelism":"50%","pullSecrets":["reg"],"selector":{"names":["n1"]},
	    "pullPolicy":{"timeoutSeconds":60,"backoffLimit":3},"completionPolicy":{"type":"Always","activeDeadlineSeconds":600}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ImagePullJob","metadata":{"name":"j","namespace":"ns"},
	  "spec":{"image":"app@sha256:00","podSelector":{"matchExpressions":[{"key":"a","operator":"In","values":["b"]}]},
	    "completionPolicy":{"type":"Never"},"imagePullPolicy":"IfNotPresent"}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"ImageListPullJob","metadata":{"name":"j","namespace":"ns"},
	  "spec":{"images":["app:v1","app:v1","UPPER:x"],"parallelism":2}}`,
	`{"apiVersion":"apps.kruise.io/v1beta1","kind":"SidecarSet","metadata":{"name":"log","labels":{"team":"a"}},
	  "spec":{"selector":{"matchLabels":{"app":"a"}},"namespaceSelector":{"matchLabels":{"env":"prod"}},
	    "containers":[{"name":"log","image":"log:v1","podInjectPolicy":"AfterAppContainer","shareVolumePolicy":{"type":"enabled"},
	      "upgradeStrategy":{"upgradeType":"HotUpgrade","hotUpgradeEmptyImage":"empty:v1"},"volumeMounts":[{"name":"logs","mountPath":"/l"}],
	      "transferEnv":[{"sourceContainerNameFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.labels['main']"}},"envNames":["A","B"]}],
	      "resourcesPolicy":{"targetContainersMode":"sum","targetContainersNameRegex":"^app$","resourcesExpr":{"limits":{"cpu":"cpu*50%"}}}}],
	    "initContainers":[{"name":"init","image":"init:v1","podInjectPolicy":"AfterAppContainer","shareVolumePolicy":{"type":"disabled"},
	      "upgradeStrategy":{"upgradeType":"ColdUpgrade"}}],
	    "volumes":[{"name":"logs","emptyDir":{}}],
	    "updateStrategy":{"type":"RollingUpdate","partition":"10%","maxUnavailable":2,
	      "scatterStrategy":[{"key":"zone","value":"a"}],"priorityStrategy":{"orderPriority":[{"orderedKey":"k"}]}},
	    "injectionStrategy":{"revision":{"customVersion":"v1","policy":"Partial"}},
	    "patchPodMetadata":[{"annotations":{"example.com/conf":"{\"a\":1}"},"patchPolicy":"MergePatchJson"}]}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"SidecarSet","metadata":{"name":"sc"},
	  "spec":{"selector":{"matchLabels":{"app":"a"}},"namespace":"ns",
	    "containers":[{"name":"app","image":"app:v1","podInjectPolicy":"BeforeAppContainer","shareVolumePolicy":{"type":"disabled"},
	      "upgradeStrategy":{"upgradeType":"ColdUpgrade"}}],
	    "updateStrategy":{"type":"NotUpdate"},"injectionStrategy":{"revision":{"revisionName":"sc-123"}},
	    "patchPodMetadata":[{"annotations":{"example.com/x":"y"},"patchPolicy":"Overwrite"}]}}`,
	`{"apiVersion":"policy.kruise.io/v1alpha1","kind":"PodUnavailableBudget","metadata":{"name":"web","namespace":"ns",
	    "annotations":{"kruise.io/pub-protect-operations":"DELETE,EVICT,RESIZE","pub.kruise.io/protect-total-replicas":"5"}},
	  "spec":{"selector":{"matchLabels":{"app":"a"},"matchExpressions":[{"key":"tier","operator":"NotIn","values":["db"]}]},
	    "maxUnavailable":"25%"}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"UnitedDeployment","metadata":{"name":"ud","namespace":"ns"},
	  "spec":{"replicas":4,"selector":{"matchLabels":{"app":"a"}},
	    "template":{"cloneSetTemplate":{"metadata":{"labels":{"app":"a"}},"spec":{"selector":{"matchLabels":{"app":"a"}},
	      "template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"app","image":"app:v1"}]}}}}},
	    "topology":{"subsets":[{"name":"a","nodeSelectorTerm":{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
	      "tolerations":[{"key":"spot","operator":"Exists"}],"minReplicas":1,"maxReplicas":"50%",
	      "patch":{"metadata":{"labels":{"zone":"a"}}}},{"name":"b","minReplicas":1}],
	      "scheduleStrategy":{"type":"Adaptive","adaptive":{"rescheduleCriticalSeconds":10,"reserveUnschedulablePods":true}}},
	    "updateStrategy":{"type":"Manual","manualUpdate":{"partitions":{"a":1}}}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"WorkloadSpread","metadata":{"name":"ws","namespace":"ns"},
	  "spec":{"targetRef":{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs"},
	    "targetFilter":{"selector":{"matchLabels":{"role":"a"}},"replicasPathList":["spec.replicas"]},
	    "subsets":[{"name":"a","requiredNodeSelectorTerm":{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
	      "preferredNodeSelectorTerms":[{"weight":10,"preference":{"matchExpressions":[{"key":"disk","operator":"Exists"}]}}],
	      "tolerations":[{"key":"spot","operator":"Exists"}],"maxReplicas":"50%","patch":{"metadata":{"labels":{"zone":"a"}}}},
	      {"name":"b"}],
	    "scheduleStrategy":{"type":"Adaptive","adaptive":{"rescheduleCriticalSeconds":30}}}}`,
	`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"PersistentPodState","metadata":{"name":"pps","namespace":"ns"},
	  "spec":{"targetRef":{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","name":"db"},
	    "requiredPersistentTopology":{"nodeTopologyKeys":["topology.kubernetes.io/zone"]},
	    "preferredPersistentTopology":[{"weight":100,"preference":{"nodeTopologyKeys":["kubernetes.io/hostname"]}}],
	    "persistentPodAnnotations":[{"key":"example.com/ip"}],"persistentPodStateRetentionPolicy":"WhenDeleted"}}`,
	`{"apiVersion":"policy.kruise.io/v1alpha1","kind":"PodUnavailableBudget","metadata":{"name":"cs","namespace":"ns"},
	  "spec":{"targetRef":{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"cs"},"minAvailable":2}}`,
}

// fuzzSidecarSetCluster is what the SidecarSet and PodUnavailableBudget webhooks read while
// fuzzed: a SidecarSet that selects the same pods as the samples, its namespace, a pinned revision
// and a patch whitelist; budgets that guard the pods and the workload of the budget samples.
func fuzzSidecarSetCluster() []client.Object {
	container := func(name string) v1beta1.SidecarSetContainer {
		return v1beta1.SidecarSetContainer{Container: corev1.Container{Name: name, Image: name + ":v1"}}
	}
	return []client.Object{
		&v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: v1beta1.SidecarSetSpec{
			Selector:   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Containers: []v1beta1.SidecarSetContainer{container("app"), container("log")},
			Volumes:    []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/l"}}}},
			PatchPodMetadata: []v1beta1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"example.com/x": "z"},
				PatchPolicy: v1beta1.SidecarSetOverwritePatchPolicy}}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"env": "prod"}}},
		&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "sc-123", Namespace: "kruise-system",
			Labels: map[string]string{sidecarrules.RevisionOwnerLabel: "log", sidecarrules.CustomVersionLabel: "v1"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: KruiseConfigurationName, Namespace: "kruise-system"},
			Data: map[string]string{PatchWhitelistKey: `{"rules":[{"selector":{"matchLabels":{"team":"a"}},"allowedAnnotationKeyExprs":["^example\\.com/"]}]}`}},
		&policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"},
			Spec: policyv1alpha1.PodUnavailableBudgetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
				{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}, MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
		&policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Name: "other-cs", Namespace: "ns"},
			Spec: policyv1alpha1.PodUnavailableBudgetSpec{TargetReference: &policyv1alpha1.PodUnavailableBudgetTargetReference{
				APIVersion: "apps.kruise.io/v1beta1", Kind: "CloneSet", Name: "cs"}, MinAvailable: ptr.To(intstr.FromString("50%"))}},
	}
}

// acceptTemplates passes every pod template (the real checker asks an API server).
type acceptTemplates struct{}

func (acceptTemplates) Check(context.Context, string, *corev1.PodTemplateSpec, *field.Path) field.ErrorList {
	return nil
}

// Every validating webhook Register serves answers any object without panicking, allowing it or
// refusing it with an HTTP error code, and never with a patch.
func FuzzValidatingWebhooks(f *testing.F) {
	scheme := webhookfuzz.NewScheme(f)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "cs", UID: "cs-uid", Controller: ptr.To(true)}}}}
	pods := fake.NewClientBuilder().WithObjects(pod).Build()
	cluster := fake.NewClientBuilder().WithScheme(scheme).WithObjects(fuzzSidecarSetCluster()...).Build()
	sidecarSets := SidecarSetOptions{Reader: cluster, Config: cluster, Namespace: "kruise-system"}
	targets := webhookfuzz.Targets(f, scheme, func(srv webhook.Server) {
		Register(srv, scheme, acceptTemplates{}, pods, sidecarSets, cluster, ResourceDistributionOptions{}, Gates{}, nil)
		RegisterContainerRecreateRequests(srv, scheme, ContainerRecreateRequestOptions{})
	})
	webhookfuzz.Seed(f, targets, fuzzSamples...)
	f.Fuzz(func(t *testing.T, path string, update bool, obj, old []byte) {
		webhookfuzz.Check(t, targets, path, update, obj, old)
	})
}
