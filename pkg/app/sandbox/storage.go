package sandbox

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kruise-ng/kruise/pkg/app/sandbox/storage"
)

// The storage provisioner is the program that starts the sandbox, run again as a process of its
// own: any program that starts sandboxes (kruise-sandbox, a test binary, a benchmark) can serve it,
// without a binary to build or find. componentEnv, set to storageComponent in that process's
// environment, makes the program serve storage instead of doing what it normally does.
const (
	componentEnv     = "KRUISE_SANDBOX_COMPONENT"
	storageComponent = "storage-provisioner"
	// storageReady is written into the volumes' folder once the provisioner serves (no volume can
	// have a name that starts with a dot).
	storageReady = ".ready"
)

func init() {
	if os.Getenv(componentEnv) == storageComponent {
		os.Exit(runStorageComponent(os.Args[1:]))
	}
}

// runStorageComponent serves the sandbox's storage until SIGTERM; it returns the exit code.
func runStorageComponent(args []string) int {
	fs := flag.NewFlagSet(storageComponent, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the sandbox's API server")
	root := fs.String("root", "", "folder that holds the volumes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	err := func() error {
		if *kubeconfig == "" || *root == "" {
			return errors.New("--kubeconfig and --root are required")
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
		if err != nil {
			return err
		}
		ready := filepath.Join(*root, storageReady)
		return storage.Serve(ctx, cfg, *root, func() { _ = os.WriteFile(ready, nil, 0o644) })
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", storageComponent, err)
		return 1
	}
	return 0
}

// VolumesDir is the folder that holds the folders of the sandbox's volumes.
func (s *Sandbox) VolumesDir() string { return filepath.Join(s.Dir, volumesDir) }

// startStorage installs the StorageClasses and runs the storage provisioner, and returns once it
// serves.
func (s *Sandbox) startStorage(ctx context.Context) error {
	cs, err := s.clientset()
	if err != nil {
		return err
	}
	if err := storage.EnsureClasses(ctx, cs); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program to run the storage provisioner: %w", err)
	}
	root := s.VolumesDir()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	args := []string{"--kubeconfig=" + filepath.Join(s.Dir, kubeconfigsDir, "storage.kubeconfig"), "--root=" + root}
	if _, err := s.run(storageComponent, exe, args, []string{componentEnv + "=" + storageComponent}); err != nil {
		return err
	}
	return s.waitFor(ctx, "storage provisioner serving classes "+storage.StandardClass+" (default) and "+storage.ExpandableClass,
		func(context.Context) (bool, error) {
			_, err := os.Stat(filepath.Join(root, storageReady))
			return err == nil, nil
		})
}
