// Package mount is the one way a handler is served on kruise-manager's webhook server.
package mount
