// Package statetest is the test suite every state backend runs (NATS's
// store_test.go runs file and memory stores through the same cases): a
// seeded random history of value, map and list operations checked against
// a model, with snapshots and restores in the middle.
package statetest
