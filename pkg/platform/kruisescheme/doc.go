// Package kruisescheme builds the runtime scheme of Kruise's binaries and tests: Kubernetes'
// built-in types, CustomResourceDefinitions and every Kruise API version.
package kruisescheme
