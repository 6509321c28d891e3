// Package sandbox runs a local Kubernetes control plane with simulated nodes for development and
// end-to-end tests: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, all real
// binaries built from source by `make tools`, on loopback, with fresh certificates; and a storage
// provisioner (package storage), which is the program that started the sandbox run again.
//
// What the kwok nodes do with pods (stages/*.yaml): pods start and run until deleted, restart a
// container in place when its image changes, and never run a bad image (tagged "broken", or from
// the host invalid.registry.k8s.io). A job's pod (controller owner a batch/v1 Job or a Kruise
// BroadcastJob, restartPolicy Never or OnFailure) exits 1-2 s after it starts: phase Succeeded. The
// annotation sandbox.kruise.io/exit-code: "N" sets the exit code of every container of a pod (any
// pod): a Never pod (or an OnFailure one with N = 0) ends Succeeded, or Failed (reason Error) for
// N != 0; an OnFailure pod with N != 0, or an Always pod, restarts its containers in a crash loop.
// Like a kubelet, a node writes again a Ready False someone else wrote while a readiness gate holds
// the pod (its own reason and message: the answer an in-place update waits for), except on the
// no-rewrite profile (Config.NoReadyRewrite, NodeProfile), whose kubelet never rewrites a Ready it
// did not compute.
//
// Storage: StorageClasses "standard" (the default; volumes cannot grow) and "expandable", both of
// provisioner sandbox.kruise.io/hostpath, whose volumes are folders under DIR/volumes.
//
// Guarantees:
//   - every listener gets a free port, so several sandboxes can run at once;
//   - every process is started in its own session and recorded (PID and kernel start time) in
//     DIR/sandbox.json, so Down stops exactly the processes Up started and nothing else;
//   - a failed Up stops what it started and removes its state;
//   - the API server presents a client certificate of a CA of its own to every webhook (its
//     --admission-control-config-file), and kruise-manager refuses webhook calls without it or a
//     replica's certificate (webhookclient.go);
//   - kwok manages only the nodes the sandbox created (annotated kwok.x-k8s.io/node=fake), so a real
//     kubelet joining later is never faked.
package sandbox
