package conversionhub

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// spoke is a v1alpha1 type that converts to and from its v1beta1 hub H.
type spoke[H any] interface {
	client.Object
	ConvertTo(dst H) error
	ConvertFrom(src H) error
}

// hubAndSpoke is the converter of one kind: v1beta1 hub H, v1alpha1 spoke S.
func hubAndSpoke[H client.Object, S spoke[H]](hub H, s S) func(*runtime.Scheme) (conversion.Converter, error) {
	return conversion.NewHubSpokeConverter(hub, conversion.NewSpokeConverter(s,
		func(_ context.Context, src H, dst S) error { return dst.ConvertFrom(src) },
		func(_ context.Context, src S, dst H) error { return src.ConvertTo(dst) }))
}

// Registry is the converters of the kinds whose versions differ, for scheme.
func Registry(scheme *runtime.Scheme) (conversion.Registry, error) {
	reg := conversion.NewRegistry()
	group := v1beta1.GroupVersion.Group
	for kind, newConverter := range map[string]func(*runtime.Scheme) (conversion.Converter, error){
		"StatefulSet": hubAndSpoke[*v1beta1.StatefulSet](&v1beta1.StatefulSet{}, &v1alpha1.StatefulSet{}),
		"DaemonSet":   hubAndSpoke[*v1beta1.DaemonSet](&v1beta1.DaemonSet{}, &v1alpha1.DaemonSet{}),
		"SidecarSet":  hubAndSpoke[*v1beta1.SidecarSet](&v1beta1.SidecarSet{}, &v1alpha1.SidecarSet{}),
	} {
		c, err := newConverter(scheme)
		if err != nil {
			return nil, err
		}
		if err := reg.RegisterConverter(schema.GroupKind{Group: group, Kind: kind}, c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// Handler is the conversion webhook's HTTP handler for scheme.
func Handler(scheme *runtime.Scheme) (http.Handler, error) {
	reg, err := Registry(scheme)
	if err != nil {
		return nil, err
	}
	return conversion.NewWebhookHandler(scheme, reg), nil
}
