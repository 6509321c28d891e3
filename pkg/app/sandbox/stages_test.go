package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/itchyny/gojq"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// stage is the part of a kwok Stage this test checks.
type stage struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ResourceRef struct {
			Kind string `json:"kind"`
		} `json:"resourceRef"`
		Selector struct {
			MatchExpressions []struct {
				Key      string   `json:"key"`
				Operator string   `json:"operator"`
				Values   []string `json:"values"`
			} `json:"matchExpressions"`
		} `json:"selector"`
		Next struct {
			Delete  bool `json:"delete"`
			Patches []struct {
				Subresource string `json:"subresource"`
				Type        string `json:"type"`
				Template    string `json:"template"`
			} `json:"patches"`
		} `json:"next"`
	} `json:"spec"`
}

// loadStages parses the sandbox's stages (the default, rewriting profile) by name.
func loadStages(t *testing.T) map[string]stage {
	t.Helper()
	return loadProfileStages(t, NodeProfile{})
}

// loadProfileStages parses the stages of nodes of profile p by name.
func loadProfileStages(t *testing.T, p NodeProfile) map[string]stage {
	t.Helper()
	all, err := Stages(p)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]stage{}
	for _, doc := range strings.Split(all, "\n---\n") {
		var s stage
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("stage does not parse: %v\n%s", err, doc)
		}
		if s.Kind != "Stage" {
			t.Fatalf("document is a %q, not a Stage:\n%s", s.Kind, doc)
		}
		if _, dup := byName[s.Metadata.Name]; dup {
			t.Fatalf("stage %q defined twice", s.Metadata.Name)
		}
		byName[s.Metadata.Name] = s
	}
	return byName
}

func TestStagesModelTheKubelet(t *testing.T) {
	for _, p := range []NodeProfile{{}, {NoReadyRewrite: true}} {
		t.Run(p.Name(), func(t *testing.T) { checkStagesModelTheKubelet(t, loadProfileStages(t, p)) })
	}
}

func checkStagesModelTheKubelet(t *testing.T, byName map[string]stage) {
	for _, want := range []string{"kruise-node-initialize", "kruise-node-heartbeat", "kruise-pod-create", "kruise-pod-start",
		"kruise-pod-gates", "kruise-pod-image-changed", "kruise-pod-restarted", "kruise-pod-image-pull-backoff",
		"kruise-pod-complete", "kruise-pod-crashed", "kruise-pod-delete"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("stage %s is missing", want)
		}
	}
	for name, s := range byName {
		for _, p := range s.Spec.Next.Patches {
			// A JSON merge patch would replace the whole conditions list and drop the conditions
			// other controllers own (readiness gates); only strategic merge keeps them.
			if p.Subresource != "status" || p.Type != "strategic" {
				t.Errorf("stage %s patches %q with %q; want the status subresource with a strategic merge patch", name, p.Subresource, p.Type)
			}
			if _, err := template.New(name).Funcs(kwokFuncs).Parse(p.Template); err != nil {
				t.Errorf("stage %s: template does not parse: %v", name, err)
			}
		}
		for _, e := range s.Spec.Selector.MatchExpressions {
			if _, err := gojq.Parse(e.Key); err != nil {
				t.Errorf("stage %s: selector %q is no jq expression: %v", name, e.Key, err)
			}
		}
	}
	// Only the owner of a readiness gate may set its condition: no stage writes a gate's condition.
	for name, s := range byName {
		for _, p := range s.Spec.Next.Patches {
			if strings.Contains(p.Template, "range .spec.readinessGates") && strings.Contains(p.Template, "type: {{ .conditionType") {
				t.Errorf("stage %s writes readiness-gate conditions itself", name)
			}
		}
	}
	if !byName["kruise-pod-delete"].Spec.Next.Delete {
		t.Error("kruise-pod-delete does not delete the pod")
	}
}

// matches evaluates a stage's selector on obj as kwok does: every expression must hold; In holds
// when a result (string, bool or integer) is among the values, Exists when a result is not null.
func matches(t *testing.T, s stage, obj any) bool {
	t.Helper()
	data := jsonValue(t, obj)
	for _, e := range s.Spec.Selector.MatchExpressions {
		q, err := gojq.Parse(e.Key)
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		failed := false
		iter := q.Run(data)
		for v, ok := iter.Next(); ok; v, ok = iter.Next() {
			if _, isErr := v.(error); isErr {
				failed = true // kwok treats an erroring query as null
				break
			}
			if v != nil {
				out = append(out, v)
			}
		}
		var hold bool
		switch e.Operator {
		case "In":
			hold = !failed && slices.ContainsFunc(out, func(v any) bool { return slices.Contains(e.Values, fmt.Sprint(v)) })
		case "Exists":
			hold = !failed && len(out) > 0
		case "DoesNotExist":
			hold = failed || len(out) == 0
		default:
			t.Fatalf("stage %s: operator %s not modelled by this test", s.Metadata.Name, e.Operator)
		}
		if !hold {
			return false
		}
	}
	return true
}

// jsonValue is obj as kwok sees it: decoded JSON (numbers as json.Number for templates).
func jsonValue(t *testing.T, obj any) any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// podStagesMatching lists the pod stages whose selector holds for pod.
func podStagesMatching(t *testing.T, stages map[string]stage, pod *corev1.Pod) []string {
	var names []string
	for name, s := range stages {
		if s.Spec.ResourceRef.Kind == "Pod" && matches(t, s, pod) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// runningPod is a pod as kwok leaves it after kruise-pod-start.
func runningPod(image string, restart corev1.RestartPolicy, owner *metav1.OwnerReference, annotations map[string]string) *corev1.Pod {
	started := metav1.NewTime(time.Unix(1700000000, 0))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1", Annotations: annotations},
		Spec:       corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "main", Image: image}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.2",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Image: image, ImageID: image + "@sha256:0", ContainerID: "containerd://c0",
				Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return pod
}

func owner(apiVersion, kind string) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "o", UID: "o-uid", Controller: ptr.To(true)}
}

// Pods of jobs run to completion, a pod can ask for its exit code, and everything else keeps
// running: exactly one exit stage (or none) applies to a running pod.
func TestExitStagesSelectJobPodsAndAnnotatedPods(t *testing.T) {
	stages := loadStages(t)
	job, bcast := owner("batch/v1", "Job"), owner("apps.kruise.io/v1alpha1", "BroadcastJob")
	code := func(c string) map[string]string { return map[string]string{ExitCodeAnnotation: c} }
	notController := owner("batch/v1", "Job")
	notController.Controller = nil
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want []string
	}{
		"Job pod, Never":                        {runningPod("app:v1", corev1.RestartPolicyNever, job, nil), []string{"kruise-pod-complete"}},
		"BroadcastJob pod, OnFailure":           {runningPod("app:v1", corev1.RestartPolicyOnFailure, bcast, nil), []string{"kruise-pod-complete"}},
		"Job pod, Never, exit 1":                {runningPod("app:v1", corev1.RestartPolicyNever, job, code("1")), []string{"kruise-pod-complete"}},
		"Job pod, OnFailure, exit 1":            {runningPod("app:v1", corev1.RestartPolicyOnFailure, job, code("1")), []string{"kruise-pod-crashed"}},
		"bare pod, Never, exit 2":               {runningPod("app:v1", corev1.RestartPolicyNever, nil, code("2")), []string{"kruise-pod-complete"}},
		"bare pod, Always, exit 0":              {runningPod("app:v1", corev1.RestartPolicyAlways, nil, code("0")), []string{"kruise-pod-crashed"}},
		"CloneSet pod":                          {runningPod("app:v1", corev1.RestartPolicyAlways, owner("apps.kruise.io/v1alpha1", "CloneSet"), nil), nil},
		"bare pod, Never, no annotation":        {runningPod("app:v1", corev1.RestartPolicyNever, nil, nil), nil},
		"Job as a non-controller owner":         {runningPod("app:v1", corev1.RestartPolicyNever, notController, nil), nil},
		"a Job kind of another group":           {runningPod("app:v1", corev1.RestartPolicyNever, owner("example.com/v1", "Job"), nil), nil},
		"Job pod whose container is restarting": {restartingPod(job), []string{"kruise-pod-restarted"}},
	} {
		if got := podStagesMatching(t, stages, tc.pod); !slices.Equal(got, tc.want) {
			t.Errorf("%s: stages %v, want %v", name, got, tc.want)
		}
	}
	done := runningPod("app:v1", corev1.RestartPolicyNever, job, nil)
	done.Status.Phase = corev1.PodSucceeded
	if got := podStagesMatching(t, stages, done); len(got) != 0 {
		t.Errorf("a Succeeded pod still matches %v", got)
	}
}

// restartingPod is a pod whose container waits to run a new image.
func restartingPod(o *metav1.OwnerReference) *corev1.Pod {
	pod := runningPod("app:v2", corev1.RestartPolicyNever, o, nil)
	pod.Status.ContainerStatuses[0].Image = "app:v1"
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	return pod
}

// A container stopped for an update runs again whatever its spec names by then: the new image, or
// the image it stopped on when the update was undone before the restart (a kubelet starts the
// container its spec names). A running container on its spec's image is left alone.
func TestAStoppedContainerRunsAgain(t *testing.T) {
	stages := loadStages(t)
	for spec, want := range map[string]string{"app:v2": "app:v2", "app:v1": "app:v1"} {
		pod := restartingPod(owner("apps.kruise.io/v1alpha1", "CloneSet"))
		pod.Spec.Containers[0].Image = spec
		if got := podStagesMatching(t, stages, pod); !slices.Equal(got, []string{"kruise-pod-restarted"}) {
			t.Errorf("stopped, spec %s: stages %v, want kruise-pod-restarted", spec, got)
			continue
		}
		cs := render(t, stages["kruise-pod-restarted"], pod).ContainerStatuses[0]
		if cs.State.Running == nil || cs.Image != want || cs.RestartCount != 1 || cs.ContainerID == "containerd://c0" {
			t.Errorf("stopped, spec %s: container %+v; want %s running again in a new container", spec, cs, want)
		}
	}
	if got := podStagesMatching(t, stages, runningPod("app:v1", corev1.RestartPolicyAlways, nil, nil)); len(got) != 0 {
		t.Errorf("a running pod matches %v", got)
	}
}

// A pod with a bad image never starts: its container waits with ImagePullBackOff instead.
func TestBadImagesNeverRun(t *testing.T) {
	stages := loadStages(t)
	created := func(image string) *corev1.Pod {
		pod := runningPod(image, corev1.RestartPolicyAlways, nil, nil)
		pod.Status.Phase = corev1.PodPending
		pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		return pod
	}
	for image, want := range map[string][]string{
		"registry.example/app:v1":              {"kruise-pod-start"},
		"invalid.registry.k8s.io/app:v1":       {"kruise-pod-image-pull-backoff"},
		"registry.example/app:broken":          {"kruise-pod-image-pull-backoff"},
		"registry.example/invalid.registry:v1": {"kruise-pod-start"},
	} {
		if got := podStagesMatching(t, stages, created(image)); !slices.Equal(got, want) {
			t.Errorf("new pod of %s: stages %v, want %v", image, got, want)
		}
	}
	// An in-place update to a bad image never restarts the container.
	pod := restartingPod(nil)
	pod.Spec.Containers[0].Image = "invalid.registry.k8s.io/app:v2"
	if got := podStagesMatching(t, stages, pod); !slices.Equal(got, []string{"kruise-pod-image-pull-backoff"}) {
		t.Errorf("update to a bad image: stages %v, want only kruise-pod-image-pull-backoff", got)
	}
	status := render(t, stages["kruise-pod-image-pull-backoff"], pod)
	if w := status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ImagePullBackOff" || !strings.Contains(w.Message, "invalid.registry.k8s.io/app:v2") {
		t.Errorf("waiting state %+v; want ImagePullBackOff naming the image", w)
	}
}

// The exit stages write what a kubelet reports: terminated containers with the exit code, and the
// pod's phase (complete) or a restarted container (crashed).
func TestExitStagesWriteTheExitCode(t *testing.T) {
	stages := loadStages(t)
	job := owner("batch/v1", "Job")
	for _, tc := range []struct {
		code, reason string
		exit         int32
		phase        corev1.PodPhase
	}{{"", "Completed", 0, corev1.PodSucceeded}, {"0", "Completed", 0, corev1.PodSucceeded}, {"3", "Error", 3, corev1.PodFailed}} {
		var ann map[string]string
		if tc.code != "" {
			ann = map[string]string{ExitCodeAnnotation: tc.code}
		}
		st := render(t, stages["kruise-pod-complete"], runningPod("app:v1", corev1.RestartPolicyNever, job, ann))
		c := st.ContainerStatuses[0]
		if st.Phase != tc.phase || c.State.Terminated == nil || c.State.Terminated.ExitCode != tc.exit ||
			c.State.Terminated.Reason != tc.reason || c.Ready || c.State.Terminated.ContainerID != "containerd://c0" {
			t.Errorf("exit code %q: phase %s, container %+v; want %s, terminated %d %s", tc.code, st.Phase, c, tc.phase, tc.exit, tc.reason)
		}
		for _, cond := range st.Conditions {
			if cond.Status != corev1.ConditionFalse || cond.Reason != "PodCompleted" {
				t.Errorf("exit code %q: condition %s=%s (%s); want False, PodCompleted", tc.code, cond.Type, cond.Status, cond.Reason)
			}
		}
	}
	st := render(t, stages["kruise-pod-crashed"], runningPod("app:v1", corev1.RestartPolicyOnFailure, job, map[string]string{ExitCodeAnnotation: "1"}))
	c := st.ContainerStatuses[0]
	if c.RestartCount != 1 || c.State.Running == nil || c.LastTerminationState.Terminated == nil ||
		c.LastTerminationState.Terminated.ExitCode != 1 || c.ContainerID == "containerd://c0" || st.Phase != "" {
		t.Errorf("crashed: container %+v, phase %q; want running again, restartCount 1, last exit 1, a new containerID, phase unchanged", c, st.Phase)
	}
}

// render executes a stage's (only) patch template on pod, as kwok does, and decodes the status.
func render(t *testing.T, s stage, pod *corev1.Pod) corev1.PodStatus {
	t.Helper()
	tpl, err := template.New(s.Metadata.Name).Funcs(kwokFuncs).Parse(strings.TrimSpace(s.Spec.Next.Patches[0].Template))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(pod)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tpl.Execute(&out, data); err != nil {
		t.Fatalf("stage %s: %v", s.Metadata.Name, err)
	}
	var st corev1.PodStatus
	if err := yaml.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("stage %s renders no status: %v\n%s", s.Metadata.Name, err, out.String())
	}
	return st
}

// kwokFuncs stands in for the template functions kwok offers (sprig's and its own) that the
// stages use, with the same behaviour on the values of these tests.
var kwokFuncs = template.FuncMap{
	"Now": func() string { return time.Unix(1700000100, 0).UTC().Format(time.RFC3339Nano) },
	"Quote": func(v any) string {
		data, err := json.Marshal(v)
		if err != nil || len(data) == 0 || data[0] != '"' {
			return strconv.Quote(fmt.Sprint(v))
		}
		return string(data)
	},
	"atoi":            func(s string) int { n, _ := strconv.Atoi(s); return n },
	"add1":            func(v any) int64 { n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64); return n + 1 },
	"sha256sum":       func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) },
	"toJson":          func(v any) string { data, _ := json.Marshal(v); return string(data) },
	"regexMatch":      func(re, s string) bool { return regexp.MustCompile(re).MatchString(s) },
	"regexReplaceAll": func(re, s, repl string) string { return regexp.MustCompile(re).ReplaceAllString(s, repl) },
	"NodeIPWith":      func(string) string { return "10.250.0.1" },
	"PodIPWith":       func(string, bool, string, string, string) string { return "10.244.0.2" },
	"NodeIP":          func() string { return "10.250.0.1" },
	"NodeConditions":  func() any { return nil },
	"Version":         func() string { return "test" },
	"YAML":            func(v any, _ ...int) (string, error) { data, err := yaml.Marshal(v); return string(data), err },
}
