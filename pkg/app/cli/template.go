package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// printTemplate writes tpl in format: "" describes it for a reader (describeTemplate), "yaml" and
// "json" write the PodTemplateSpec itself.
func printTemplate(out io.Writer, tpl *corev1.PodTemplateSpec, format string) error {
	switch format {
	case "":
		return describeTemplate(out, tpl)
	case "yaml":
		data, err := yaml.Marshal(tpl)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	case "json":
		data, err := json.MarshalIndent(tpl, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", data)
		return err
	}
	return fmt.Errorf("--output %q: want yaml or json (or nothing, for a description)", format)
}

// describeTemplate writes tpl as kubectl rollout history --revision describes a revision: its
// labels and annotations, each init container and container (image, command, ports, resources,
// environment, mounts), the volumes and the node selector.
func describeTemplate(out io.Writer, tpl *corev1.PodTemplateSpec) error {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "Pod Template:")
	writeList(tw, "  Labels", keyValues(tpl.Labels))
	writeList(tw, "  Annotations", keyValues(tpl.Annotations))
	if sa := tpl.Spec.ServiceAccountName; sa != "" {
		fmt.Fprintf(tw, "  Service Account:\t%s\n", sa)
	}
	if len(tpl.Spec.InitContainers) > 0 {
		fmt.Fprintln(tw, "  Init Containers:")
		for i := range tpl.Spec.InitContainers {
			writeContainer(tw, &tpl.Spec.InitContainers[i])
		}
	}
	fmt.Fprintln(tw, "  Containers:")
	for i := range tpl.Spec.Containers {
		writeContainer(tw, &tpl.Spec.Containers[i])
	}
	var volumes []string
	for _, v := range tpl.Spec.Volumes {
		volumes = append(volumes, v.Name+": "+volumeSource(&v.VolumeSource))
	}
	writeList(tw, "  Volumes", volumes)
	writeList(tw, "  Node-Selectors", keyValues(tpl.Spec.NodeSelector))
	return tw.Flush()
}

// writeContainer writes one container of a template's description.
func writeContainer(tw io.Writer, c *corev1.Container) {
	fmt.Fprintf(tw, "   %s:\n", c.Name)
	fmt.Fprintf(tw, "    Image:\t%s\n", c.Image)
	if len(c.Command) > 0 {
		writeList(tw, "    Command", c.Command)
	}
	if len(c.Args) > 0 {
		writeList(tw, "    Args", c.Args)
	}
	var ports []string
	for _, p := range c.Ports {
		ports = append(ports, fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol))
	}
	if len(ports) > 0 {
		fmt.Fprintf(tw, "    Ports:\t%s\n", strings.Join(ports, ", "))
	}
	if len(c.Resources.Limits) > 0 {
		writeList(tw, "    Limits", quantities(c.Resources.Limits))
	}
	if len(c.Resources.Requests) > 0 {
		writeList(tw, "    Requests", quantities(c.Resources.Requests))
	}
	writeList(tw, "    Environment", environment(c))
	var mounts []string
	for _, m := range c.VolumeMounts {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		mounts = append(mounts, fmt.Sprintf("%s from %s (%s)", m.MountPath, m.Name, mode))
	}
	writeList(tw, "    Mounts", mounts)
}

// writeList writes "label: first" and each further item on a line of its own, aligned; <none>
// when there is no item.
func writeList(tw io.Writer, label string, items []string) {
	if len(items) == 0 {
		fmt.Fprintf(tw, "%s:\t<none>\n", label)
		return
	}
	for i, item := range items {
		if i == 0 {
			fmt.Fprintf(tw, "%s:\t%s\n", label, item)
		} else {
			fmt.Fprintf(tw, "\t%s\n", item)
		}
	}
}

// keyValues is m as sorted key=value lines.
func keyValues(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// quantities is a resource list as sorted name: quantity lines.
func quantities(list corev1.ResourceList) []string {
	var out []string
	for name, q := range list {
		out = append(out, fmt.Sprintf("%s: %s", name, q.String()))
	}
	slices.Sort(out)
	return out
}

// environment is a container's env, one variable a line, in its order, then its envFrom sources.
func environment(c *corev1.Container) []string {
	var out []string
	for _, e := range c.Env {
		out = append(out, e.Name+"="+envValue(&e))
	}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			out = append(out, fmt.Sprintf("every key of configmap %s (prefix %q)", from.ConfigMapRef.Name, from.Prefix))
		case from.SecretRef != nil:
			out = append(out, fmt.Sprintf("every key of secret %s (prefix %q)", from.SecretRef.Name, from.Prefix))
		}
	}
	return out
}

// envValue is an env variable's value, or where it is read from.
func envValue(e *corev1.EnvVar) string {
	src := e.ValueFrom
	switch {
	case src == nil:
		return e.Value
	case src.FieldRef != nil:
		return "(from field " + src.FieldRef.FieldPath + ")"
	case src.ResourceFieldRef != nil:
		r := src.ResourceFieldRef
		suffix := ""
		if !r.Divisor.IsZero() && r.Divisor.Cmp(resource.MustParse("1")) != 0 {
			suffix = ", divisor " + r.Divisor.String()
		}
		return fmt.Sprintf("(from resource %s of %s%s)", r.Resource, r.ContainerName, suffix)
	case src.ConfigMapKeyRef != nil:
		return fmt.Sprintf("(from key %s of configmap %s)", src.ConfigMapKeyRef.Key, src.ConfigMapKeyRef.Name)
	case src.SecretKeyRef != nil:
		return fmt.Sprintf("(from key %s of secret %s)", src.SecretKeyRef.Key, src.SecretKeyRef.Name)
	}
	return "(from another source)"
}

// volumeSource names a volume's source in a few words.
func volumeSource(v *corev1.VolumeSource) string {
	switch {
	case v.ConfigMap != nil:
		return "configmap " + v.ConfigMap.Name
	case v.Secret != nil:
		return "secret " + v.Secret.SecretName
	case v.PersistentVolumeClaim != nil:
		return "persistent volume claim " + v.PersistentVolumeClaim.ClaimName
	case v.EmptyDir != nil:
		return "empty dir"
	case v.HostPath != nil:
		return "host path " + v.HostPath.Path
	case v.Projected != nil:
		return "projected"
	case v.DownwardAPI != nil:
		return "downward API"
	case v.Ephemeral != nil:
		return "ephemeral volume claim"
	}
	return "other source"
}
