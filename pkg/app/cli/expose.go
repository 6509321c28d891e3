package cli

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// exposeOptions are expose's flags, named as kubectl expose names them.
type exposeOptions struct {
	port, targetPort, protocol, name, serviceType string
	selector, labels, clusterIP, sessionAffinity  string
	loadBalancerIP, dryRun                        string
	output                                        *outputFlags
	externalIPs                                   []string
}

func newExposeCommand(env *Env) *cobra.Command {
	o := &exposeOptions{output: newOutputFlags("exposed")}
	cmd := &cobra.Command{
		Use:   "expose " + workloadUse + " [--port=PORT] [--target-port=PORT] [--name=NAME] [--type=TYPE] [--dry-run] [-o yaml|json|name]",
		Short: "Create a Service for a workload's pods, as kubectl expose does for a Deployment",
		Long: "Create a Service that selects the workload's pods: its selector is the workload's matchLabels (a selector " +
			"with matchExpressions cannot be a Service's: give --selector), its port --port or else the pod template's " +
			"first container port, the target port --target-port or else the port, its labels --labels or else the " +
			"workload's, its name --name or else the workload's.",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, w, err := env.load(cmd.Context(), args)
			if err != nil {
				return err
			}
			svc, err := o.service(w)
			if err != nil {
				return err
			}
			return o.create(cmd.Context(), env, c, svc)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.port, "port", "", "the port the Service serves on (default: the pod template's first container port)")
	f.StringVar(&o.targetPort, "target-port", "", "the container port (a number or a port name) the Service sends to (default: --port)")
	f.StringVar(&o.protocol, "protocol", "TCP", "the port's protocol: TCP, UDP or SCTP")
	f.StringVar(&o.name, "name", "", "the Service's name (default: the workload's)")
	f.StringVar(&o.serviceType, "type", "", "the Service's type: ClusterIP (default), NodePort, LoadBalancer or ExternalName")
	f.StringVarP(&o.selector, "selector", "l", "", "the Service's selector, key=value[,key=value] (default: the workload's matchLabels)")
	f.StringVar(&o.labels, "labels", "", "the Service's labels, key=value[,key=value] (default: the workload's)")
	f.StringSliceVar(&o.externalIPs, "external-ip", nil, "external IPs the Service also accepts traffic on (comma-separated)")
	f.StringVar(&o.clusterIP, "cluster-ip", "", `the Service's cluster IP; "None" for a headless Service`)
	f.StringVar(&o.sessionAffinity, "session-affinity", "", "None or ClientIP")
	f.StringVar(&o.loadBalancerIP, "load-balancer-ip", "", "the IP a LoadBalancer Service asks for")
	o.output.AddFlags(cmd)
	addDryRunFlag(cmd, &o.dryRun, "print the Service, send nothing")
	return cmd
}

// service is the Service o asks for in front of w's pods.
func (o *exposeOptions) service(w workload) (*corev1.Service, error) {
	obj := w.object()
	svc := &corev1.Service{}
	svc.APIVersion, svc.Kind = "v1", "Service"
	svc.Namespace, svc.Name = obj.GetNamespace(), o.name
	if svc.Name == "" {
		svc.Name = obj.GetName()
	}
	var err error
	if svc.Spec.Selector, err = o.podSelector(w); err != nil {
		return nil, err
	}
	svc.Labels = maps.Clone(obj.GetLabels())
	if o.labels != "" {
		if svc.Labels, err = labels.ConvertSelectorToLabelsMap(o.labels); err != nil {
			return nil, fmt.Errorf("--labels %q: %w", o.labels, err)
		}
	}
	port, err := o.servicePort(w)
	if err != nil {
		return nil, err
	}
	if port != nil {
		svc.Spec.Ports = []corev1.ServicePort{*port}
	}
	switch t := corev1.ServiceType(o.serviceType); t {
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
		svc.Spec.Type = t
	default:
		return nil, fmt.Errorf("--type %q: want ClusterIP, NodePort, LoadBalancer or ExternalName", o.serviceType)
	}
	switch a := corev1.ServiceAffinity(o.sessionAffinity); a {
	case "", corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP:
		svc.Spec.SessionAffinity = a
	default:
		return nil, fmt.Errorf("--session-affinity %q: want None or ClientIP", o.sessionAffinity)
	}
	svc.Spec.ClusterIP, svc.Spec.ExternalIPs, svc.Spec.LoadBalancerIP = o.clusterIP, o.externalIPs, o.loadBalancerIP
	if o.clusterIP == "None" {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	return svc, nil
}

// podSelector is --selector, or else w's matchLabels: a selector with matchExpressions cannot
// be a Service's.
func (o *exposeOptions) podSelector(w workload) (map[string]string, error) {
	if o.selector != "" {
		sel, err := labels.ConvertSelectorToLabelsMap(o.selector)
		if err != nil {
			return nil, fmt.Errorf("--selector %q: %w", o.selector, err)
		}
		return sel, nil
	}
	sel := w.selector()
	switch {
	case sel != nil && len(sel.MatchExpressions) > 0:
		return nil, fmt.Errorf("%s selects its pods with matchExpressions, which a Service's selector cannot hold: "+
			"give the Service's selector with --selector key=value[,key=value]", ref(w))
	case sel == nil || len(sel.MatchLabels) == 0:
		return nil, fmt.Errorf("%s has no matchLabels to select its pods by: give --selector key=value[,key=value]", ref(w))
	}
	return maps.Clone(sel.MatchLabels), nil
}

// servicePort is the Service's port: --port, or the pod template's first container port; nil
// for an ExternalName Service without one.
func (o *exposeOptions) servicePort(w workload) (*corev1.ServicePort, error) {
	p := &corev1.ServicePort{Protocol: corev1.Protocol(strings.ToUpper(o.protocol))}
	switch p.Protocol {
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
	default:
		return nil, fmt.Errorf("--protocol %q: want TCP, UDP or SCTP", o.protocol)
	}
	if o.port != "" {
		n, err := strconv.ParseInt(o.port, 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--port %q: want a port number, 1 to 65535", o.port)
		}
		p.Port = int32(n)
	} else {
		for _, c := range w.template().Spec.Containers {
			if len(c.Ports) > 0 {
				p.Port, p.Name = c.Ports[0].ContainerPort, c.Ports[0].Name
				if c.Ports[0].Protocol != "" && o.protocol == "TCP" {
					p.Protocol = c.Ports[0].Protocol
				}
				break
			}
		}
	}
	if p.Port == 0 {
		if o.serviceType == string(corev1.ServiceTypeExternalName) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s's pod template declares no container port: give --port", ref(w))
	}
	p.TargetPort = intstr.FromInt32(p.Port)
	if o.targetPort != "" {
		p.TargetPort = intstr.Parse(o.targetPort)
	}
	return p, nil
}

// create creates svc as --dry-run says and reports it as -o says.
func (o *exposeOptions) create(ctx context.Context, env *Env, c client.Client, svc *corev1.Service) error {
	mode, err := parseDryRun(o.dryRun)
	if err != nil {
		return err
	}
	printer, err := o.output.printer()
	if err != nil {
		return err
	}
	suffix, err := createAs(ctx, c, svc, mode)
	if err != nil {
		return err
	}
	if printer != nil {
		return printer.PrintObj(svc, env.Streams.Out)
	}
	_, err = fmt.Fprintf(env.Streams.Out, "service/%s exposed%s\n", svc.Name, suffix)
	return err
}
