package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Permission is one verb on one resource (group/resource[/subresource]; "" group: the core API).
type Permission struct{ Group, Resource, Verb string }

func (p Permission) String() string {
	g := p.Group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s %s/%s", p.Verb, g, p.Resource)
}

// EffectivePermissions are what user may do in each of namespaces (cluster-wide rules included),
// as the API server's authorizer evaluates them (SelfSubjectRulesReview, impersonating the user).
// Wildcards are kept as "*".
func EffectivePermissions(ctx context.Context, admin *rest.Config, user string, groups []string, namespaces ...string) ([]Permission, error) {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	seen := map[Permission]bool{}
	for _, ns := range namespaces {
		review, err := cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx,
			&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("rules of %s in %s: %w", user, ns, err)
		}
		for _, r := range review.Status.ResourceRules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						seen[Permission{g, res, v}] = true
					}
				}
			}
		}
	}
	out := make([]Permission, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Permission) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// UsedPermissions are the verbs on resources that user's requests in the audit log used, whatever
// the answer (a refused request still shows the code needs the permission).
func UsedPermissions(auditLog string, user string) (map[Permission]bool, error) {
	f, err := os.Open(auditLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	used := map[Permission]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.User.Username != user || e.ObjectRef == nil {
			continue
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		used[Permission{e.ObjectRef.APIGroup, res, e.Verb}] = true
	}
	return used, sc.Err()
}

// UnusedPermissions are the granted permissions no request of the audit log used and that allowed
// does not excuse (permission string → why it is kept though the tests do not use it). Rules that
// everyone has (discovery, self reviews) are skipped.
func UnusedPermissions(granted []Permission, used map[Permission]bool, allowed map[string]string) []string {
	var out []string
	for _, p := range granted {
		if p.Group == "authorization.k8s.io" || p.Group == "authentication.k8s.io" || used[p] {
			continue
		}
		// Informers list through their watch (client-go's WatchListClient: the initial list is
		// streamed as watch events) and fall back to a plain list on API servers without it.
		if p.Verb == "list" && used[Permission{p.Group, p.Resource, "watch"}] {
			continue
		}
		if _, ok := allowed[p.String()]; ok {
			continue
		}
		out = append(out, p.String())
	}
	return out
}

// CheckPermissionsUsed fails when user (in groups) is granted, in any of namespaces, a permission
// no request of theirs in the audit log used and excused does not name (permission → the code path
// that needs it though the tests do not reach it). It prints how many permissions user has.
func CheckPermissionsUsed(ctx context.Context, admin *rest.Config, auditLog, user string, groups, namespaces []string, excused map[string]string) error {
	granted, err := EffectivePermissions(ctx, admin, user, groups, namespaces...)
	if err != nil {
		return err
	}
	// What any user of those groups may do (e.g. read ClusterTrustBundles) is not the component's.
	everyone, err := EffectivePermissions(ctx, admin, user+"-baseline", groups, namespaces...)
	if err != nil {
		return err
	}
	granted = slices.DeleteFunc(granted, func(p Permission) bool { return slices.Contains(everyone, p) })
	used, err := UsedPermissions(auditLog, user)
	if err != nil {
		return err
	}
	unused := UnusedPermissions(granted, used, excused)
	fmt.Fprintf(os.Stderr, "%s: %d permissions (verb × resource) granted, %d unused by the tests and not excused\n", user, len(granted), len(unused))
	if len(unused) > 0 {
		return fmt.Errorf("%s is granted permissions no request of the tests used (remove them, or excuse them with the code path that needs them):\n  %s",
			user, strings.Join(unused, "\n  "))
	}
	return nil
}
