// Package graph describes a job: a DAG of vertices (operators and sources)
// with a parallelism each, joined by edges that say how rows move between
// the subtasks of two vertices:
//
//	Forward    subtask i sends to subtask i (equal parallelism)
//	Hash       each row goes to the subtask owning its key's key group
//	           (state.KeyGroupOf, state.SubtaskOf), so keyed state can be
//	           rescaled by moving whole key groups later
//	Broadcast  every row goes to every subtask
//
// Each edge is a set of channels, one per (upstream subtask, downstream
// subtask) pair it connects; each channel is one bounded queue. A vertex
// with k in-edges has k logical inputs, numbered by Edge.Input; its subtask
// reads all channels of all its in-edges.
//
// Validate checks what the runtime relies on and returns errors wrapping
// base.ErrInvalidArgument that name the vertex or edge at fault.
package graph
