package defaults

import (
	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// SetDefaultsCloneSetTemplate defaults a CloneSet's pod template and volume
// claim templates as OpenKruise v1.9.0's CloneSet webhook does (with its
// TemplateNoDefaults gate off, the default). The revision name of a CloneSet
// is a hash of its stored template, so this is what makes a CloneSet created
// through Kruise carry the revision names OpenKruise would give it.
func SetDefaultsCloneSetTemplate(obj *v1alpha1.CloneSet) {
	SetDefaultsPodTemplate(&obj.Spec.Template.Spec)
	SetDefaultsClaimTemplates(obj.Spec.VolumeClaimTemplates)
}

// SetDefaultsHostNetworkPorts gives every container and init container port of a hostNetwork pod
// spec without a hostPort its containerPort as hostPort, as Kubernetes defaulted pod templates
// before 1.28 (OpenKruise's gate DefaultHostNetworkHostPortsInPodTemplates).
func SetDefaultsHostNetworkPorts(spec *corev1.PodSpec) {
	if !spec.HostNetwork {
		return
	}
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			for j := range cs[i].Ports {
				if p := &cs[i].Ports[j]; p.HostPort == 0 {
					p.HostPort = p.ContainerPort
				}
			}
		}
	}
}

// SetDefaultsPodTemplate defaults the pod spec of a workload template whose
// containers are updated in place (OpenKruise's SetDefaultPodSpec):
//
//  1. every entry of containers (not initContainers) with no imagePullPolicy
//     gets Always, so an in-place image change is always pulled;
//  2. then Kubernetes' pod-spec defaults, piecewise: the pod-level ones
//     (dnsPolicy, restartPolicy, securityContext, terminationGracePeriodSeconds,
//     schedulerName), the volumes, every init container and container
//     (imagePullPolicy from the image tag where still empty, termination
//     message, ports, env, resources, probes, lifecycle hooks), the ephemeral
//     containers (as containers, but without imagePullPolicy and termination
//     message) and overhead.
//
// Only the functions OpenKruise calls are applied, as Kubernetes v1.32 (the
// version OpenKruise v1.9.0 builds with) defines them: not the declarative
// defaults of generated code (gRPC probe service, fileKeyRef.optional, the
// in-tree volume plugins' fields, pod-level resources), not the host-network
// host ports (off since Kubernetes 1.28), not the Pod-only ones
// (enableServiceLinks, requests from limits), and not Kubernetes v1.37's
// serviceAccount/serviceAccountName alignment (a conversion step in v1.32).
// Only empty fields are filled, so applying it twice equals applying it once.
func SetDefaultsPodTemplate(spec *corev1.PodSpec) {
	for i := range spec.Containers {
		defaultString(&spec.Containers[i].ImagePullPolicy, corev1.PullAlways)
	}
	setPodSpecDefaults(spec)
	setVolumesDefaults(spec.Volumes)
	for i := range spec.InitContainers {
		setContainerDefaults(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		setContainerDefaults(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		setContainerBodyDefaults((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundResourceList(spec.Overhead)
}

// setPodSpecDefaults is Kubernetes' SetDefaults_PodSpec.
func setPodSpecDefaults(spec *corev1.PodSpec) {
	defaultString(&spec.DNSPolicy, corev1.DNSClusterFirst)
	defaultString(&spec.RestartPolicy, corev1.RestartPolicyAlways)
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	defaultString(&spec.SchedulerName, corev1.DefaultSchedulerName)
}

// setContainerDefaults is Kubernetes' SetDefaults_Container followed by the
// defaults of the container's parts.
func setContainerDefaults(c *corev1.Container) {
	setContainerOwnDefaults(c)
	setContainerBodyDefaults(c)
}

// setContainerOwnDefaults is Kubernetes' SetDefaults_Container: the
// imagePullPolicy from the image tag and the termination message path and
// policy.
func setContainerOwnDefaults(c *corev1.Container) {
	defaultString(&c.ImagePullPolicy, pullPolicyForImage(c.Image))
	defaultString(&c.TerminationMessagePath, corev1.TerminationMessagePathDefault)
	defaultString(&c.TerminationMessagePolicy, corev1.TerminationMessageReadFile)
}

// setContainerBodyDefaults defaults a container's ports, env, resources,
// probes (startup probe included) and lifecycle hooks (what ephemeral
// containers get too).
func setContainerBodyDefaults(c *corev1.Container) {
	setContainerPartsDefaults(c)
	if c.StartupProbe != nil {
		setContainerProbeDefaults(c.StartupProbe)
	}
}

// setContainerPartsDefaults is setContainerBodyDefaults without the startup
// probe: ports, env, resources, the liveness and readiness probes and the
// lifecycle hooks. It is all OpenKruise's SidecarSet defaulting gives the
// parts of a sidecar container.
func setContainerPartsDefaults(c *corev1.Container) {
	for i := range c.Ports {
		defaultString(&c.Ports[i].Protocol, corev1.ProtocolTCP)
	}
	for i := range c.Env {
		if from := c.Env[i].ValueFrom; from != nil {
			setFieldRefDefaults(from.FieldRef)
		}
	}
	roundResourceList(c.Resources.Limits)
	roundResourceList(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if p != nil {
			setContainerProbeDefaults(p)
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*corev1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil {
				setHTTPGetDefaults(h.HTTPGet)
			}
		}
	}
}

// setContainerProbeDefaults is Kubernetes' SetDefaults_Probe plus its
// SetDefaults_HTTPGetAction. The thresholds' minimum is 1, so 0 means unset.
func setContainerProbeDefaults(p *corev1.Probe) {
	defaultZeroInt32(&p.TimeoutSeconds, 1)
	defaultZeroInt32(&p.PeriodSeconds, 10)
	defaultZeroInt32(&p.SuccessThreshold, 1)
	defaultZeroInt32(&p.FailureThreshold, 3)
	setHTTPGetDefaults(p.HTTPGet)
}

// setHTTPGetDefaults is Kubernetes' SetDefaults_HTTPGetAction (nil-safe).
func setHTTPGetDefaults(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	defaultString(&h.Path, "/")
	defaultString(&h.Scheme, corev1.URISchemeHTTP)
}

// setFieldRefDefaults is Kubernetes' SetDefaults_ObjectFieldSelector
// (nil-safe): the field path is read from apiVersion v1.
func setFieldRefDefaults(f *corev1.ObjectFieldSelector) {
	if f != nil {
		defaultString(&f.APIVersion, "v1")
	}
}

// roundResourceList is Kubernetes' SetDefaults_ResourceList: every quantity
// is rounded up to milli scale (0.0001 becomes 1m); a rounded quantity is
// left as it is.
func roundResourceList(l corev1.ResourceList) {
	for name, q := range l {
		q.RoundUp(resource.Milli)
		l[name] = q
	}
}

// pullPolicyForImage is the imagePullPolicy Kubernetes' container defaulting
// gives an image: Always when its tag is "latest" or it has neither tag nor
// digest, IfNotPresent otherwise (a digest without a tag, or an image
// reference that does not parse). References are parsed as Kubernetes parses
// them (github.com/distribution/reference, the Docker Hub domain implied).
func pullPolicyForImage(image string) corev1.PullPolicy {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return corev1.PullIfNotPresent
	}
	tagged, hasTag := named.(reference.Tagged)
	_, hasDigest := named.(reference.Digested)
	if (hasTag && tagged.Tag() == "latest") || (!hasTag && !hasDigest) {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}
