// Package etcdtest starts an in-process etcd server for tests
// (go.etcd.io/etcd/server/v3/embed) on free local ports with a silent
// logger. It lives in its own package so that only tests that need a
// server link etcd's server code (DEPENDENCIES.md "Build time").
package etcdtest
