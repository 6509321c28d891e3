package sandbox

import (
	"context"
	"fmt"
	"strings"
)

// ManagerFronts are the two Fronts a fault campaign puts around the sandbox's kruise-manager
// (FrontKruiseManager), so that it can impair the manager's links without touching the manager.
// They run in the caller's process and live as long as its ctx: the manager, restarted or not,
// goes through them from then on.
type ManagerFronts struct {
	// Webhooks takes the API server's calls of the manager's webhooks (admission and CRD
	// conversion): the manager registers its URL (--webhook-url-port). Slowing it (FrontSlow) or
	// dropping it (FrontDrop) is the webhook server slow or unreachable for the API server while
	// the manager runs on: each webhook's failure policy then decides, fail-closed ones refuse the
	// request, fail-open ones let it through unchanged.
	Webhooks *Front
	// API takes the manager's connections to the API server: the manager's kubeconfig names it,
	// and TLS passes through it untouched (the API server still sees the manager's client
	// certificate). Lagging it (FrontLag) makes the manager's cache lag: every byte the API server
	// sends the manager, its watch events included, arrives the delay late, so its informers see
	// the world late while others act on it. It is not a lag of the watches alone: the answers to
	// the manager's own requests (its reads, its writes and their conflicts, its leader election's
	// renewals) come late as well, so the manager also learns late what it did; its requests reach
	// the API server at once, and the world itself (what the API server holds and every other
	// client sees) is never late.
	API *Front
}

// FrontKruiseManager starts the ManagerFronts on loopback and restarts kruise-manager (SIGTERM)
// behind them: registering the webhooks' Front as their URL, as AddKruiseManagerReplica does, and
// with a kubeconfig that names the API's Front. It returns once the new manager is ready.
func (s *Sandbox) FrontKruiseManager(ctx context.Context) (*ManagerFronts, error) {
	var manager *Process
	for _, p := range s.Processes {
		if p.Name == "kruise-manager" {
			manager = p
		}
	}
	if manager == nil {
		return nil, fmt.Errorf("no kruise-manager runs in sandbox %s", s.Dir)
	}
	webhooks, err := StartFront(ctx, "127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", s.Ports.KruiseWebhook))
	if err != nil {
		return nil, err
	}
	api, err := StartFront(ctx, "127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", s.Ports.APIServer))
	if err != nil {
		_ = webhooks.Close()
		return nil, err
	}
	fronts := &ManagerFronts{Webhooks: webhooks, API: api}
	if err := s.frontKruiseManager(ctx, manager, fronts); err != nil {
		_ = webhooks.Close()
		_ = api.Close()
		return nil, err
	}
	s.logf("kruise-manager behind fronts: webhooks at %s, API server at %s", webhooks.Addr, api.Addr)
	return fronts, nil
}

func (s *Sandbox) frontKruiseManager(ctx context.Context, manager *Process, fronts *ManagerFronts) error {
	kubeconfig, err := s.kubeconfigAt(safeName(KruiseManagerUser)+"-via-front", url("https", fronts.API.Port()), KruiseManagerUser)
	if err != nil {
		return err
	}
	env := []string{"KUBECONFIG=" + kubeconfig}
	for _, e := range manager.Env {
		if !strings.HasPrefix(e, "KUBECONFIG=") {
			env = append(env, e)
		}
	}
	manager.Env = env // the restart below starts it with this
	return s.restartKruiseBehind(ctx, webhookURLPort(fronts.Webhooks.Port()))
}
