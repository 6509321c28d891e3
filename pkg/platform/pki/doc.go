// Package pki issues the X.509 material Kruise needs: a self-signed certificate authority, serving
// certificates and client certificates signed by it, and signing keys. All keys are ECDSA P-256.
package pki
