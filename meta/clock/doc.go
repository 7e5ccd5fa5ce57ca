// Package clock is the meta service's source of wall time, injected so that
// tests drive time by hand (STYLE.md "Concurrency, I/O and time are
// injected"; pebble's commitEnv, etcd raft's Tick).
//
// System is the real clock. Manual is a clock that moves only when a test
// calls Advance or Set; timers whose deadline it passes fire in deadline
// order, each exactly once.
//
// Invariant (clock-manual-fires): after Manual.Advance returns, every timer
// whose deadline is at or before the new time has fired (its channel holds
// the firing time) or has been stopped.
package clock
