// Package sandbox runs a local Kubernetes control plane with simulated nodes for development and
// end-to-end tests: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, all real
// binaries built from source by `make tools`, on loopback, with fresh certificates.
//
// Guarantees:
//   - every listener gets a free port, so several sandboxes can run at once;
//   - every process is started in its own session and recorded (PID and kernel start time) in
//     DIR/sandbox.json, so Down stops exactly the processes Up started and nothing else;
//   - a failed Up stops what it started and removes its state;
//   - kwok manages only the nodes the sandbox created (annotated kwok.x-k8s.io/node=fake), so a real
//     kubelet joining later is never faked.
package sandbox
