// Command etcd is etcd's own server main, built from the pinned go.etcd.io/etcd/server/v3 module so
// the sandbox and the integration tests run a real etcd without downloading a release binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
