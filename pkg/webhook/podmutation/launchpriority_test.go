package podmutation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// launchPod has one container per env value ("" for none); ordered sets the annotation.
func launchPod(ordered bool, prios ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	if ordered {
		pod.Annotations = map[string]string{appspub.ContainerLaunchPriorityKey: appspub.ContainerLaunchOrdered}
	}
	for i, p := range prios {
		c := corev1.Container{Name: "c" + string(rune('0'+i)), Image: "app:v1"}
		if p != "" {
			c.Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: p}}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod
}

// barrierKeys lists each container's barrier key ("-" when it has no barrier env), checking the
// ConfigMap it names.
func barrierKeys(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	var out []string
	for _, c := range pod.Spec.Containers {
		key, n := "-", 0
		for _, e := range c.Env {
			if e.Name != appspub.ContainerLaunchBarrierEnvName {
				continue
			}
			n++
			ref := e.ValueFrom.ConfigMapKeyRef
			if ref.Name != pod.Name+"-barrier" || e.Value != "" || ref.Optional != nil {
				t.Errorf("container %s: barrier env %+v, want configMapKeyRef to %s-barrier", c.Name, e, pod.Name)
			}
			key = ref.Key
		}
		if n > 1 {
			t.Errorf("container %s has %d barrier envs", c.Name, n)
		}
		out = append(out, key)
	}
	return strings.Join(out, " ")
}

func TestInjectLaunchBarrier(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // keys, or the error's text
	}{
		{"Ordered: first highest", launchPod(true, "", "", ""), "p_0 p_-1 p_-2"},
		{"Ordered wins over env, bad values not read", launchPod(true, "abc", "7", ""), "p_0 p_-1 p_-2"},
		{"Ordered with one container: nothing", launchPod(true, ""), "-"},
		{"env: unset is 0", launchPod(false, "", "1"), "p_0 p_1"},
		{"env: negative and large", launchPod(false, "-2147483647", "2147483647", "3"), "p_-2147483647 p_2147483647 p_3"},
		{"env: all equal is no order", launchPod(false, "4", "4"), "- -"},
		{"env: all zero is no order", launchPod(false, "0", ""), "- -"},
		{"env on a single container: nothing, value not read", launchPod(false, "x"), "-"},
		{"env not an integer: refused", launchPod(false, "", "high"), `spec.containers[1].env[0].value: Invalid value: "high": KRUISE_CONTAINER_PRIORITY must be an integer`},
		{"env with spaces: refused", launchPod(false, " 1", ""), `spec.containers[0].env[0].value: Invalid value: " 1"`},
		{"no annotation, no env: nothing", launchPod(false, "", ""), "- -"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := InjectLaunchBarrier(tc.pod)
			got := ""
			if err != nil {
				got = err.Error()
				if !strings.HasPrefix(got, tc.want) {
					t.Errorf("error %q, want %q", got, tc.want)
				}
				return
			}
			if got = barrierKeys(t, tc.pod); got != tc.want {
				t.Errorf("keys %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInjectLaunchBarrierValueFrom(t *testing.T) {
	pod := launchPod(false, "", "")
	pod.Spec.Containers[1].Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName,
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	if _, err := InjectLaunchBarrier(pod); err == nil || !strings.Contains(err.Error(), "spec.containers[1].env[0].value") {
		t.Fatalf("a priority from valueFrom: error %v, want it refused", err)
	}
}

// A pod with only generateName is named, so that its barrier's name is known; a second call (a
// reinvocation) changes nothing, and a stale barrier env is replaced rather than duplicated.
func TestInjectLaunchBarrierNamesAndIsIdempotent(t *testing.T) {
	pod := launchPod(true, "", "")
	pod.Name, pod.GenerateName = "", "web-"
	if changed, err := InjectLaunchBarrier(pod); err != nil || !changed {
		t.Fatalf("first call: changed %v, err %v", changed, err)
	}
	if !strings.HasPrefix(pod.Name, "web-") || len(pod.Name) != len("web-")+5 {
		t.Fatalf("generated name %q", pod.Name)
	}
	if got := barrierKeys(t, pod); got != "p_0 p_-1" {
		t.Fatalf("keys %q", got)
	}
	if changed, _ := InjectLaunchBarrier(pod); changed {
		t.Error("second call changed the pod")
	}
	// A sidecar injected in front (SidecarSet) shifts the order: the reinvocation rewrites the keys.
	pod.Spec.Containers = append([]corev1.Container{{Name: "sidecar", Image: "proxy:v1"}}, pod.Spec.Containers...)
	if changed, _ := InjectLaunchBarrier(pod); !changed {
		t.Error("reinvocation after a sidecar was added changed nothing")
	}
	if got := barrierKeys(t, pod); got != "p_0 p_-1 p_-2" {
		t.Errorf("keys after the sidecar %q", got)
	}
}

func launchRequest(t *testing.T, pod *corev1.Pod) admission.Request {
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns",
		Object: runtime.RawExtension{Raw: raw}}}
}

func TestHandleLaunchPriority(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	h := &Handler{Decoder: admission.NewDecoder(scheme)}
	resp := h.handleLaunchPriority(context.Background(), launchRequest(t, launchPod(true, "", "")))
	if !resp.Allowed || len(resp.Patches) != 2 {
		t.Errorf("Ordered pod: allowed %v, patches %v", resp.Allowed, resp.Patches)
	}
	resp = h.handleLaunchPriority(context.Background(), launchRequest(t, launchPod(false, "1", "x")))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 400 || !strings.Contains(resp.Result.Message, "spec.containers[1].env[0].value") {
		t.Errorf("bad priority: %+v", resp.AdmissionResponse)
	}
	resp = h.handleLaunchPriority(context.Background(), launchRequest(t, launchPod(false, "", "")))
	if !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("pod without an order: allowed %v, patches %v", resp.Allowed, resp.Patches)
	}
}

func TestScopeLaunchPriority(t *testing.T) {
	w := &admissionregistrationv1.MutatingWebhook{Name: LaunchPriorityWebhookName}
	Scope(w, ScopeOptions{FailurePolicy: admissionregistrationv1.Fail, ExcludedNamespaces: []string{"kube-system"}})
	if w.ObjectSelector != nil || len(w.MatchConditions) != 1 || w.MatchConditions[0].Expression != LaunchPriorityMatch {
		t.Errorf("launch priority entry: object selector %v, match conditions %v", w.ObjectSelector, w.MatchConditions)
	}
	if w.ReinvocationPolicy == nil || *w.ReinvocationPolicy != admissionregistrationv1.IfNeededReinvocationPolicy {
		t.Errorf("reinvocation policy %v, want IfNeeded (after SidecarSet injection)", w.ReinvocationPolicy)
	}
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail || len(w.NamespaceSelector.MatchExpressions) != 1 {
		t.Errorf("failure policy %v, namespace selector %v", w.FailurePolicy, w.NamespaceSelector)
	}
}
