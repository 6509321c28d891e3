// Command kruise-daemon is Kruise's per-node agent over CRI (pkg/app/daemon).
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kruise-ng/kruise/pkg/app/daemon"
	"github.com/kruise-ng/kruise/pkg/platform/memlimit"
	"github.com/kruise-ng/kruise/pkg/platform/version"
)

func main() {
	var opts daemon.Options
	fs := flag.NewFlagSet("kruise-daemon", flag.ContinueOnError)
	opts.BindFlags(fs, os.Getenv("NODE_NAME"))
	showVersion := fs.Bool("version", false, "print the version and exit")
	memoryRatio := fs.Float64("memory-limit-ratio", 0.9, "soft memory limit of the Go runtime as a fraction of the memory limit of the process's cgroup, its container's (0: none; GOMEMLIMIT, when set, wins)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else in-cluster configuration)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println(version.String("kruise-daemon"))
		return
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "kruise-daemon: %v\n", err)
		os.Exit(2)
	}
	if *kubeconfig != "" {
		os.Setenv("KUBECONFIG", *kubeconfig)
	}
	log := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(log)
	log.Info(version.String("kruise-daemon"))
	if soft, err := memlimit.Set(memlimit.CgroupRoot, memlimit.SelfCgroup, *memoryRatio); err != nil {
		fmt.Fprintf(os.Stderr, "kruise-daemon: --memory-limit-ratio: %v\n", err)
		os.Exit(2)
	} else if soft > 0 {
		log.Info("soft memory limit from the cgroup's", "bytes", soft, "ratio", *memoryRatio)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kruise-daemon: no Kubernetes client configuration: %v\n", err)
		os.Exit(1)
	}
	cfg.UserAgent = "kruise-daemon"
	if err := daemon.Run(ctrl.SetupSignalHandler(), cfg, opts, log.WithName("kruise-daemon")); err != nil {
		fmt.Fprintf(os.Stderr, "kruise-daemon: %v\n", err)
		os.Exit(1)
	}
}
