// Package freeport picks loopback ports for listeners a process starts later (a sandbox's
// components, a test's servers). A port the kernel hands out for ":0" comes from its ephemeral
// range (net.ipv4.ip_local_port_range), the range every outgoing connection takes its local port
// from: between the pick and the listen, a client of the API server may take it ("bind: address
// already in use"). So ports are picked below that range, where only listeners go.
package freeport
