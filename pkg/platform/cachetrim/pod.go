package cachetrim

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// object interns the strings of the kinds it knows; others are left as they are.
func (p *Pool) object(obj any) {
	if pod, ok := obj.(*corev1.Pod); ok {
		p.Pod(pod)
	}
}

// Pod interns the strings a pod shares with the other pods of its workload: the keys and values
// of its labels, the keys of its annotations (their values are mostly the pod's own), owner
// references, its spec's names, images, paths and tolerations, and its status' condition types,
// reasons and container images. What is the pod's own (name, UID, IPs, container IDs) is left as
// it is: interning it would only fill the pool.
func (p *Pool) Pod(pod *corev1.Pod) {
	p.meta(&pod.ObjectMeta)
	s := &pod.Spec
	for i := range s.Volumes {
		p.volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		p.container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		p.container(&s.Containers[i])
	}
	s.NodeName = p.Intern(s.NodeName)
	s.ServiceAccountName = p.Intern(s.ServiceAccountName)
	s.DeprecatedServiceAccount = p.Intern(s.DeprecatedServiceAccount)
	s.SchedulerName = p.Intern(s.SchedulerName)
	s.PriorityClassName = p.Intern(s.PriorityClassName)
	s.RestartPolicy = corev1.RestartPolicy(p.Intern(string(s.RestartPolicy)))
	s.DNSPolicy = corev1.DNSPolicy(p.Intern(string(s.DNSPolicy)))
	p.internMap(s.NodeSelector)
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		t.Key, t.Value = p.Intern(t.Key), p.Intern(t.Value)
		t.Operator = corev1.TolerationOperator(p.Intern(string(t.Operator)))
		t.Effect = corev1.TaintEffect(p.Intern(string(t.Effect)))
	}
	for i := range s.ReadinessGates {
		g := &s.ReadinessGates[i]
		g.ConditionType = corev1.PodConditionType(p.Intern(string(g.ConditionType)))
	}
	p.status(&pod.Status)
}

func (p *Pool) meta(m *metav1.ObjectMeta) {
	m.Namespace = p.Intern(m.Namespace)
	m.GenerateName = p.Intern(m.GenerateName)
	p.internMap(m.Labels)
	for k, v := range m.Annotations {
		m.Annotations[p.Intern(k)] = v
	}
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind, o.Name = p.Intern(o.APIVersion), p.Intern(o.Kind), p.Intern(o.Name)
		o.UID = types.UID(p.Intern(string(o.UID))) // the workload's: shared by its pods
	}
	for i := range m.Finalizers {
		m.Finalizers[i] = p.Intern(m.Finalizers[i])
	}
}

func (p *Pool) volume(v *corev1.Volume) {
	// A volume's name is often the pod's own (kube-api-access-<random>): left as it is.
	if pr := v.Projected; pr != nil {
		for i := range pr.Sources {
			src := &pr.Sources[i]
			if t := src.ServiceAccountToken; t != nil {
				t.Path = p.Intern(t.Path)
			}
			if c := src.ConfigMap; c != nil {
				c.Name = p.Intern(c.Name)
				p.keyPaths(c.Items)
			}
			if d := src.DownwardAPI; d != nil {
				for j := range d.Items {
					it := &d.Items[j]
					it.Path = p.Intern(it.Path)
					if f := it.FieldRef; f != nil {
						f.APIVersion, f.FieldPath = p.Intern(f.APIVersion), p.Intern(f.FieldPath)
					}
				}
			}
		}
	}
	if c := v.ConfigMap; c != nil {
		c.Name = p.Intern(c.Name)
		p.keyPaths(c.Items)
	}
	if s := v.Secret; s != nil {
		s.SecretName = p.Intern(s.SecretName)
		p.keyPaths(s.Items)
	}
}

func (p *Pool) keyPaths(items []corev1.KeyToPath) {
	for i := range items {
		items[i].Key, items[i].Path = p.Intern(items[i].Key), p.Intern(items[i].Path)
	}
}

func (p *Pool) container(c *corev1.Container) {
	c.Name, c.Image = p.Intern(c.Name), p.Intern(c.Image)
	c.TerminationMessagePath = p.Intern(c.TerminationMessagePath)
	c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(p.Intern(string(c.TerminationMessagePolicy)))
	c.ImagePullPolicy = corev1.PullPolicy(p.Intern(string(c.ImagePullPolicy)))
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		m.MountPath, m.SubPath = p.Intern(m.MountPath), p.Intern(m.SubPath)
	}
	for i := range c.Env {
		c.Env[i].Name = p.Intern(c.Env[i].Name)
	}
	for i := range c.Ports {
		c.Ports[i].Name = p.Intern(c.Ports[i].Name)
		c.Ports[i].Protocol = corev1.Protocol(p.Intern(string(c.Ports[i].Protocol)))
	}
}

func (p *Pool) status(st *corev1.PodStatus) {
	st.Phase = corev1.PodPhase(p.Intern(string(st.Phase)))
	st.QOSClass = corev1.PodQOSClass(p.Intern(string(st.QOSClass)))
	st.HostIP = p.Intern(st.HostIP) // a node's pods share it
	for i := range st.HostIPs {
		st.HostIPs[i].IP = p.Intern(st.HostIPs[i].IP)
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type = corev1.PodConditionType(p.Intern(string(c.Type)))
		c.Status = corev1.ConditionStatus(p.Intern(string(c.Status)))
		c.Reason, c.Message = p.Intern(c.Reason), p.Intern(c.Message)
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			cs := &list[i]
			cs.Name, cs.Image, cs.ImageID = p.Intern(cs.Name), p.Intern(cs.Image), p.Intern(cs.ImageID)
			if w := cs.State.Waiting; w != nil {
				w.Reason = p.Intern(w.Reason)
			}
		}
	}
}
