// Package lint holds tests that keep the tree's architecture honest: the
// import graph points only downward (STYLE.md "Layout"), and every package
// says what it owns in a doc.go. It has no code of its own.
package lint
