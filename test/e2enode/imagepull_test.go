package e2enode

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// testRegistry is a registry of the test's own on loopback: a proxy to the sandbox's registry that
// may ask for basic auth and may hold manifest requests for a tag until released. It counts the
// manifest requests it served, so a test can tell the node really pulled through it.
type testRegistry struct {
	Host           string
	user, password string
	mu             sync.Mutex
	held           map[string]chan struct{} // tag → closed when released
	manifests      map[string]int           // tag → manifest requests served
	delay          time.Duration            // added to every manifest request: a slow registry
	srv            *http.Server
}

func startTestRegistry(t *testing.T, sb *sandbox.Sandbox, user, password string) *testRegistry {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &testRegistry{Host: ln.Addr().String(), user: user, password: password, held: map[string]chan struct{}{}, manifests: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: sb.RealNode.Registry})
	r.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.user != "" {
			if u, p, ok := req.BasicAuth(); !ok || u != r.user || p != r.password {
				w.Header().Set("WWW-Authenticate", `Basic realm="kruise-test"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		if _, tag, ok := strings.Cut(req.URL.Path, "/manifests/"); ok {
			r.mu.Lock()
			hold, delay := r.held[tag], r.delay
			r.mu.Unlock()
			time.Sleep(delay)
			if hold != nil {
				select {
				case <-hold:
				case <-req.Context().Done():
					return
				}
			}
			r.mu.Lock()
			r.manifests[tag]++
			r.mu.Unlock()
		}
		proxy.ServeHTTP(w, req)
	})}
	go func() { _ = r.srv.Serve(ln) }()
	t.Cleanup(func() { _ = r.srv.Close() })
	if err := sb.TrustPlainHTTPRegistry(r.Host); err != nil {
		t.Fatal(err)
	}
	return r
}

// hold makes manifest requests for tag wait until the returned func is called.
func (r *testRegistry) hold(tag string) (release func()) {
	ch := make(chan struct{})
	r.mu.Lock()
	r.held[tag] = ch
	r.mu.Unlock()
	return sync.OnceFunc(func() { close(ch) })
}

func (r *testRegistry) served(tag string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.manifests[tag]
}

func pullJob(ns, name, image string) *v1beta1.ImagePullJob {
	return &v1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1beta1.ImagePullJobSpec{Image: image, ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{
			Selector:         &v1beta1.ImagePullJobNodeSelector{Names: []string{sandbox.RealNodeName}},
			Parallelism:      ptr.To(intstr.FromInt32(1)),
			PullPolicy:       &v1beta1.ImagePullJobPullPolicy{TimeoutSeconds: ptr.To[int32](60), BackoffLimit: ptr.To[int32](2)},
			CompletionPolicy: v1beta1.ImagePullJobCompletionPolicy{Type: v1beta1.ImagePullJobCompletionAlways}}}}
}

func waitJob(t *testing.T, c client.Client, ns, name string, timeout time.Duration, what string, cond func(*v1beta1.ImagePullJob) bool) *v1beta1.ImagePullJob {
	t.Helper()
	job := &v1beta1.ImagePullJob{}
	harness.Eventually(t, timeout, "ImagePullJob "+name+" "+what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return false, err.Error()
		}
		return cond(job), fmt.Sprintf("status %+v", job.Status)
	})
	return job
}

// nodeTag is the real node's NodeImage report on image (name:tag), or nil.
func nodeTag(t *testing.T, c client.Client, image string) *v1beta1.NodeImageTagStatus {
	t.Helper()
	ni := &v1beta1.NodeImage{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: sandbox.RealNodeName}, ni); err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(image, ":")
	name, tag := image[:i], image[i+1:]
	for _, s := range ni.Status.ImageStatuses[name].Tags {
		if s.Tag == tag {
			return &s
		}
	}
	return nil
}

// pullJobWithSecret: an ImagePullJob pulls app:v2 onto the real node from a registry that wants a
// password, with the credentials from the job's pull secret; NodeImage and the job report it.
func pullJobWithSecret(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	reg := startTestRegistry(t, sb, "kruise", "pa55word")
	cfg := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host, base64.StdEncoding.EncodeToString([]byte("kruise:pa55word")))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registry"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(cfg)}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	image := reg.Host + "/app:v2"
	job := pullJob(ns, "pull-v2", image)
	job.Spec.PullSecrets = []string{"registry"}
	t0 := time.Now()
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, c, ns, job.Name, 60*time.Second, "succeeded on the real node", func(j *v1beta1.ImagePullJob) bool {
		return j.Status.CompletionTime != nil
	})
	t.Logf("job finished in %.1fs: %s", time.Since(t0).Seconds(), done.Status.Message)
	if s := done.Status; s.Desired != 1 || s.Succeeded != 1 || s.Failed != 0 || len(s.FailedNodes) != 0 {
		t.Fatalf("job status %+v, want 1 desired, 1 succeeded; the node says %+v", s, nodeTag(t, c, image))
	}
	if reg.served("v2") == 0 {
		t.Error("the node never fetched the manifest through the password-protected registry")
	}
	st := nodeTag(t, c, image)
	if st == nil || st.Phase != v1beta1.NodeImagePullSucceeded || !strings.HasPrefix(st.ImageID, "sha256:") || st.CompletionTime == nil {
		t.Errorf("NodeImage reports %+v, want Succeeded with the image ID", st)
	}
	// The daemon read a copy of the secret in kruise-daemon-config, never the user's namespace.
	if _, err := cs.CoreV1().Secrets("kruise-daemon-config").Get(ctx, ns+".registry", metav1.GetOptions{}); err != nil {
		t.Errorf("the secret's copy for the daemons: %v", err)
	}
	// Deleting the job releases the node's tag and the secret's copy.
	if err := c.Delete(ctx, done); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the job's tag and secret copy are released", func() (bool, string) {
		_, err := cs.CoreV1().Secrets("kruise-daemon-config").Get(ctx, ns+".registry", metav1.GetOptions{})
		st := nodeTag(t, c, image)
		return st == nil && err != nil, fmt.Sprintf("tag %+v, secret copy err %v", st, err)
	})

	// Without the secret the registry refuses: the task fails after its retries and the job says where.
	bad := pullJob(ns, "pull-no-secret", reg.Host+"/app:v1")
	bad.Spec.PullPolicy.BackoffLimit = ptr.To[int32](1)
	if err := c.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	failed := waitJob(t, c, ns, bad.Name, 60*time.Second, "failed on the real node", func(j *v1beta1.ImagePullJob) bool {
		return j.Status.CompletionTime != nil
	})
	if s := failed.Status; s.Failed != 1 || len(s.FailedNodes) != 1 || s.FailedNodes[0] != sandbox.RealNodeName {
		t.Errorf("job status %+v, want 1 failed on %s", s, sandbox.RealNodeName)
	}
	if st := nodeTag(t, c, reg.Host+"/app:v1"); st == nil || st.Phase != v1beta1.NodeImagePullFailed || !strings.Contains(st.Message, "2 times") {
		t.Errorf("NodeImage reports %+v, want Failed after 2 attempts", st)
	}
}

// daemonKilledMidPull: kruise-daemon is SIGKILLed while its pull hangs on the registry; the daemon
// started after it pulls again and the job completes.
func daemonKilledMidPull(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	reg := startTestRegistry(t, sb, "", "")
	release := reg.hold("v1")
	defer release()
	image := reg.Host + "/app:v1"
	job := pullJob(ns, "pull-through-crash", image)
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the node reports the pull in progress", func() (bool, string) {
		st := nodeTag(t, c, image)
		return st != nil && st.Phase == v1beta1.NodeImagePullPulling, fmt.Sprintf("%+v", st)
	})
	if err := sb.CrashKruiseDaemon(ctx); err != nil {
		t.Fatal(err)
	}
	if reg.served("v1") != 0 {
		t.Fatal("the manifest was served before the release: the killed daemon may have finished the pull")
	}
	release()
	done := waitJob(t, c, ns, job.Name, 60*time.Second, "completed by the restarted daemon", func(j *v1beta1.ImagePullJob) bool {
		return j.Status.CompletionTime != nil
	})
	if done.Status.Succeeded != 1 {
		t.Errorf("job status %+v, want 1 succeeded", done.Status)
	}
	if st := nodeTag(t, c, image); st == nil || st.Phase != v1beta1.NodeImagePullSucceeded {
		t.Errorf("NodeImage reports %+v, want Succeeded", st)
	}
}

// imageListPull: an ImageListPullJob pulls two images onto the real node through one ImagePullJob
// each, and sums their status up.
func imageListPull(t *testing.T, sb *sandbox.Sandbox, cs kubernetes.Interface, c client.Client) {
	ctx := context.Background()
	ns := harness.Namespace(t, cs)
	reg := startTestRegistry(t, sb, "", "")
	images := []string{reg.Host + "/app:v1", reg.Host + "/app:v2"}
	list := &v1beta1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "list"},
		Spec: v1beta1.ImageListPullJobSpec{Images: images, ImagePullJobTemplate: pullJob(ns, "", "").Spec.ImagePullJobTemplate}}
	if err := c.Create(ctx, list); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the list completed", func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(list), list); err != nil {
			return false, err.Error()
		}
		return list.Status.CompletionTime != nil, fmt.Sprintf("%+v", list.Status)
	})
	if s := list.Status; s.Desired != 2 || s.Completed != 2 || s.Succeeded != 2 || len(s.FailedImageStatuses) != 0 {
		t.Errorf("list status %+v, want 2 images pulled", s)
	}
	for _, img := range images {
		if st := nodeTag(t, c, img); st == nil || st.Phase != v1beta1.NodeImagePullSucceeded {
			t.Errorf("NodeImage reports %+v for %s, want Succeeded", st, img)
		}
		if reg.served(img[strings.LastIndex(img, ":")+1:]) == 0 {
			t.Errorf("%s was never fetched from the registry", img)
		}
	}
}
