package sandbox

import (
	"strconv"
	"strings"
	"testing"
)

// Every listener must use one of the sandbox's allocated ports, never a component's fixed default,
// so that two sandboxes never collide.
func TestEveryListenerUsesAnAllocatedPort(t *testing.T) {
	p := Ports{EtcdClient: 20001, EtcdPeer: 20002, APIServer: 20003, ControllerManager: 20004, Scheduler: 20005, Kwok: 20006}
	cases := map[string]struct {
		args []string
		want []string
	}{
		"etcd":                    {etcdArgs("/d", p), []string{"--listen-client-urls=http://127.0.0.1:20001", "--listen-peer-urls=http://127.0.0.1:20002"}},
		"kube-apiserver":          {apiServerArgs("/d", p, false), []string{"--secure-port=20003", "--bind-address=127.0.0.1"}},
		"kube-controller-manager": {controllerManagerArgs("/d", p), []string{"--secure-port=20004", "--bind-address=127.0.0.1"}},
		"kube-scheduler":          {schedulerArgs("/d", p), []string{"--secure-port=20005", "--bind-address=127.0.0.1"}},
		"kwok":                    {kwokArgs("/d", p), []string{"--server-address=127.0.0.1:20006"}},
	}
	for name, c := range cases {
		for _, w := range c.want {
			if !contains(c.args, w) {
				t.Errorf("%s: missing %s in %v", name, w, c.args)
			}
		}
	}
}

func TestControllersAreNotClientBound(t *testing.T) {
	args := controllerManagerArgs("/d", Ports{})
	if !contains(args, "--kube-api-qps="+strconv.Itoa(controllerQPS)) || controllerQPS < 500 {
		t.Errorf("kube-controller-manager QPS too low to roll 2,000 pods: %v", args)
	}
	if !strings.Contains(schedulerConfig("/d"), "qps: 1000") {
		t.Errorf("scheduler config does not raise its QPS:\n%s", schedulerConfig("/d"))
	}
	for _, f := range []string{"podPlayStageParallelism", "nodePlayStageParallelism", "nodeLeaseParallelism", "podsOnNodeSyncParallelism"} {
		if !strings.Contains(kwokConfiguration, f+":") {
			t.Errorf("kwok configuration must set %s (kwok exits when some are unset)", f)
		}
	}
	if !contains(apiServerArgs("/d", Ports{}, false), "--enable-priority-and-fairness=true") {
		t.Error("API Priority and Fairness must be on")
	}
}

func TestAuditLogOnlyWhenAsked(t *testing.T) {
	if hasPrefix(apiServerArgs("/d", Ports{}, false), "--audit-log-path=") {
		t.Error("audit log written without --audit-log")
	}
	if !contains(apiServerArgs("/d", Ports{}, true), "--audit-log-path=/d/audit.log") {
		t.Error("--audit-log does not write DIR/audit.log")
	}
}

func TestFakeNodesFit2000Pods(t *testing.T) {
	pods := fakeNode(0).Status.Allocatable.Pods().Value()
	if pods*10 < 2000 {
		t.Errorf("10 nodes hold %d pods; want >= 2000", pods*10)
	}
	if fakeNode(0).Annotations[FakeNodeAnnotation] != "fake" {
		t.Error("fake nodes must carry the annotation kwok selects on")
	}
}

func contains(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

func hasPrefix(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}
