package sandbox

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

//go:embed stages/*.yaml
var stageFiles embed.FS

// readyRewriteStages is the stage file of the kubelet's answer to a Ready it did not compute,
// which the no-rewrite node profile leaves out.
const readyRewriteStages = "stages/pod-ready-rewrite.yaml"

// NodeProfile says how the kwok nodes' simulated kubelet behaves where kubelets differ.
type NodeProfile struct {
	// NoReadyRewrite: the kubelet does not rewrite a Ready it did not compute. When someone else
	// wrote a pod's Ready False while a readiness gate holds it (an in-place update taking the pod
	// out of service), a kubelet writes Ready False again with its own reason; a node of this
	// profile leaves it as it is (as some virtual kubelets and simulated nodes do), so an in-place
	// update waiting for that answer gets none. Ready still follows the containers and gates when
	// they change.
	NoReadyRewrite bool
}

// Name is the profile's name in figures and logs: "rewrite" or "no-rewrite".
func (p NodeProfile) Name() string {
	if p.NoReadyRewrite {
		return "no-rewrite"
	}
	return "rewrite"
}

// Stages returns the kwok Stage documents the sandbox installs (node and pod lifecycle) for nodes
// of profile p, joined into one multi-document YAML.
func Stages(p NodeProfile) (string, error) {
	names, err := fs.Glob(stageFiles, "stages/*.yaml")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	docs := make([]string, 0, len(names))
	for _, n := range names {
		if p.NoReadyRewrite && n == readyRewriteStages {
			continue
		}
		data, err := stageFiles.ReadFile(n)
		if err != nil {
			return "", err
		}
		docs = append(docs, strings.TrimSpace(string(data)))
	}
	return strings.Join(docs, "\n---\n") + "\n", nil
}

// ExitCodeAnnotation on a pod makes its containers on kwok nodes exit with that code (an integer)
// 1-2 s after they start; the package documentation says what follows, by restart policy.
const ExitCodeAnnotation = "sandbox.kruise.io/exit-code"

// Labels and capacity of the fake nodes. 250 pods per node fits 2,000 pods on 10 nodes with room.
const (
	// NodeTypeLabel tells fake nodes (value "kwok") from real ones.
	NodeTypeLabel  = "type"
	fakeNodePods   = "250"
	fakeNodeCPU    = "32"
	fakeNodeMemory = "256Gi"
)

// FakeNodeName is the name of the i-th fake node.
func FakeNodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// FakeNodeIP is the InternalIP of the i-th fake node, in 10.250.0.0/16 (kwok reports it as hostIP).
func FakeNodeIP(i int) string { return fmt.Sprintf("10.250.%d.%d", (i+1)/256, (i+1)%256) }

func fakeNode(i int) *corev1.Node { return FakeNode(FakeNodeName(i), FakeNodeIP(i)) }

// FakeNode is a kwok-managed node named name with InternalIP ip and the sandbox's fake capacity,
// for nodes beyond the sandbox's own (tests that need nodes of their own).
func FakeNode(name, ip string) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(fakeNodeCPU),
		corev1.ResourceMemory: resource.MustParse(fakeNodeMemory),
		corev1.ResourcePods:   resource.MustParse(fakeNodePods),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				NodeTypeLabel:                   "kwok",
				corev1.LabelHostname:            name,
				corev1.LabelOSStable:            "linux",
				corev1.LabelArchStable:          "amd64",
				"node-role.kubernetes.io/agent": "",
			},
			Annotations: map[string]string{FakeNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: name},
			},
		},
	}
}

// createFakeNodes creates nodes 0..n-1; existing ones are kept.
func createFakeNodes(ctx context.Context, cs kubernetes.Interface, n int) error {
	for i := range n {
		_, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(i), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", FakeNodeName(i), err)
		}
	}
	return nil
}
