package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// A fault the injector can cause, by name (the report counts them by these names).
const (
	killManager      = "kill kruise-manager"
	freezeManager    = "freeze kruise-manager"
	restartAPIServer = "restart kube-apiserver"
	freezeEtcd       = "freeze etcd"
	restartKwok      = "restart kwok"
	slowWebhooks     = "slow kruise webhooks"
	dropWebhooks     = "drop kruise webhooks"
	lagManagerCache  = "lag kruise-manager's cache"
)

var faultKinds = []string{killManager, freezeManager, restartAPIServer, freezeEtcd, restartKwok, slowWebhooks, dropWebhooks, lagManagerCache}

// injector causes a fault at random times (every 10–30 s, from the seed's own stream): it kills
// (SIGKILL) or freezes (SIGSTOP) kruise-manager, restarts the API server, freezes etcd, restarts
// kwok, makes the API server's calls of Kruise's webhooks slow or dropped, or makes the manager's
// cache lag (the manager's fronts, sandbox.ManagerFronts). Each fault ends before the next starts;
// lastEnd is when the last one ended.
type injector struct {
	sb      *sandbox.Sandbox
	fronts  *sandbox.ManagerFronts
	rng     *rand.Rand
	counts  map[string]int
	lastEnd time.Time
	log     *eventLog
	// failures are faults that could not be caused or whose component did not come back.
	failures []string
	// revived counts kruise-manager's exits on its own (it was started again).
	revived int
}

// revive starts kruise-manager, kube-controller-manager and kube-scheduler again if they have
// exited (as their pods would be).
func (in *injector) revive(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	did, err := in.sb.ReviveKruiseManager(ctx)
	if did {
		in.revived++
		in.log.add("kruise-manager exited on its own: started again")
	}
	if err != nil {
		in.failures = append(in.failures, "start kruise-manager again: "+err.Error())
	}
	started, err := in.sb.ReviveControlPlane(ctx)
	for _, name := range started {
		in.log.add("%s exited on its own: started again", name)
	}
	if err != nil {
		in.failures = append(in.failures, "start the control plane again: "+err.Error())
	}
}

func newInjector(sb *sandbox.Sandbox, fronts *sandbox.ManagerFronts, seed uint64, log *eventLog) *injector {
	return &injector{sb: sb, fronts: fronts, rng: rand.New(rand.NewPCG(seed, 2)), counts: map[string]int{}, log: log}
}

// run causes faults until ctx ends; between them it brings kruise-manager back when it has exited
// on its own, as a pod's restart policy would (counted in revived).
func (in *injector) run(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		next := time.Now().Add(time.Duration(10_000+in.rng.IntN(20_000)) * time.Millisecond)
		for time.Now().Before(next) {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			in.revive(ctx)
		}
		kind := faultKinds[in.rng.IntN(len(faultKinds))]
		in.log.add("fault: %s", kind)
		// A fault is carried through even when the run ends meanwhile: its component must be back.
		err := in.cause(context.WithoutCancel(ctx), kind)
		in.lastEnd = time.Now()
		in.counts[kind]++
		if err != nil {
			in.failures = append(in.failures, kind+": "+err.Error())
			in.log.add("fault %s failed: %v", kind, err)
		}
	}
}

func (in *injector) cause(ctx context.Context, kind string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	switch kind {
	case killManager:
		return in.sb.CrashKruiseManager(ctx)
	case freezeManager:
		return in.sb.Freeze(ctx, "kruise-manager", time.Duration(2000+in.rng.IntN(6000))*time.Millisecond)
	case restartAPIServer:
		return in.sb.RestartAPIServer(ctx)
	case freezeEtcd:
		return in.sb.Freeze(ctx, "etcd", time.Duration(1000+in.rng.IntN(2000))*time.Millisecond)
	case slowWebhooks:
		// 1–8 s on each byte the API server sends: a call on an open connection waits the delay, a
		// new one's TLS handshake twice; Kruise's webhooks time out at 10 s (its registration
		// probe at 5 s), so some calls answer late and some time out.
		delay := time.Duration(1000+in.rng.IntN(7000)) * time.Millisecond
		return in.impair(ctx, in.fronts.Webhooks, sandbox.FrontSlow, delay, time.Duration(5000+in.rng.IntN(10_000))*time.Millisecond)
	case dropWebhooks:
		return in.impair(ctx, in.fronts.Webhooks, sandbox.FrontDrop, 0, time.Duration(2000+in.rng.IntN(6000))*time.Millisecond)
	case lagManagerCache:
		// 1–5 s on each byte the API server sends the manager: within its leader election's renew
		// deadline (10 s), so it lags rather than loses its Lease.
		delay := time.Duration(1000+in.rng.IntN(4000)) * time.Millisecond
		return in.impair(ctx, in.fronts.API, sandbox.FrontLag, delay, time.Duration(5000+in.rng.IntN(10_000))*time.Millisecond)
	default:
		return in.sb.RestartKwok(ctx)
	}
}

// impair puts fault (with delay) on front for d, then heals it: the bytes it held are delivered at
// once. ctx ending early heals it at once.
func (in *injector) impair(ctx context.Context, front *sandbox.Front, fault sandbox.FrontFault, delay, d time.Duration) error {
	if front == nil {
		return errors.New("kruise-manager runs behind no front")
	}
	in.log.add("front %s: %s (delay %s) for %s", front.Addr, fault, delay, d)
	front.Impair(fault, delay)
	defer front.Heal()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}
