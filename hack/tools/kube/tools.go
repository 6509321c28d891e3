//go:build tools

// Package kube pins the Kubernetes binaries that Kruise's sandbox and tests run. It is a separate
// module so that k8s.io/kubernetes never enters the product's go.mod.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
