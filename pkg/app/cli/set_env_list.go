package cli

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listEnv prints, as kubectl's set env --list does, the variables of the containers pattern
// matches in each workload target and s name once change has applied (nothing is sent).
func (e *Env) listEnv(ctx context.Context, target []string, s selection, pattern string, resolve bool, change func(workload) error) error {
	p, err := e.pick(ctx, target, s)
	if err != nil {
		return err
	}
	errs := p.refused
	for _, w := range p.ws {
		if err := e.listOne(ctx, p.c, w, pattern, resolve, change); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// listOne prints the variables of w's containers pattern matches: KEY=VALUE, or "# KEY from
// SOURCE" for a reference, which resolve reads (with c) when it is a secret's or configmap's key.
func (e *Env) listOne(ctx context.Context, c client.Client, w workload, pattern string, resolve bool, change func(workload) error) error {
	if err := change(w); err != nil {
		return fmt.Errorf("%s: %w", ref(w), err)
	}
	selected, err := selectContainers(w.template().Spec.Containers, pattern)
	if err != nil {
		return fmt.Errorf("%s: %w", ref(w), err)
	}
	out, failed := e.Streams.Out, 0
	for _, ct := range selected {
		fmt.Fprintf(out, "# %s %s, container %s\n", w.kind().gk.Kind, w.object().GetName(), ct.Name)
		for _, v := range ct.Env {
			switch {
			case v.ValueFrom == nil:
				fmt.Fprintf(out, "%s=%s\n", v.Name, v.Value)
			case resolve && (v.ValueFrom.SecretKeyRef != nil || v.ValueFrom.ConfigMapKeyRef != nil):
				value, err := resolveRef(ctx, c, w.object().GetNamespace(), v.ValueFrom)
				if err != nil {
					fmt.Fprintf(out, "# %s from %s: %v\n", v.Name, refString(v.ValueFrom), err)
					failed++
					continue
				}
				fmt.Fprintf(out, "%s=%s\n", v.Name, value)
			default:
				fmt.Fprintf(out, "# %s from %s\n", v.Name, refString(v.ValueFrom))
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d references could not be resolved", ref(w), failed)
	}
	return nil
}

// refString names where a variable's value comes from, in kubectl's words.
func refString(from *corev1.EnvVarSource) string {
	switch {
	case from.ConfigMapKeyRef != nil:
		return fmt.Sprintf("configmap %s, key %s", from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key)
	case from.SecretKeyRef != nil:
		return fmt.Sprintf("secret %s, key %s", from.SecretKeyRef.Name, from.SecretKeyRef.Key)
	case from.FieldRef != nil:
		return "field path " + from.FieldRef.FieldPath
	case from.ResourceFieldRef != nil:
		prefix := ""
		if n := from.ResourceFieldRef.ContainerName; n != "" {
			prefix = n + "/"
		}
		return "resource field " + prefix + from.ResourceFieldRef.Resource
	}
	return "invalid valueFrom"
}

// resolveRef reads the value of a secret's or configmap's key in namespace ns.
func resolveRef(ctx context.Context, c client.Client, ns string, from *corev1.EnvVarSource) (string, error) {
	if r := from.SecretKeyRef; r != nil {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.Name}, s); err != nil {
			return "", err
		}
		if v, ok := s.Data[r.Key]; ok {
			return string(v), nil
		}
		return "", fmt.Errorf("secret %s has no key %s", r.Name, r.Key)
	}
	r := from.ConfigMapKeyRef
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.Name}, cm); err != nil {
		return "", err
	}
	if v, ok := cm.Data[r.Key]; ok {
		return v, nil
	}
	return "", fmt.Errorf("configmap %s has no key %s", r.Name, r.Key)
}
