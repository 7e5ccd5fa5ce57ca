// Package api carries meta.Service over the network as HTTP+JSON, so that
// jobs and query servers in other processes use the meta service exactly as
// in-process callers do. Handler serves any meta.Service; Client implements
// meta.Service against a Handler. Both run the meta/metatest suite.
//
// # Protocol (version 1)
//
// Every method is POST /v1/<Method> (the Go method name, e.g.
// /v1/AcquireVersion) with a JSON request body and a JSON response body:
//
//	200 {"result": <value>}
//	4xx/5xx {"error": {"code": "<code>", "message": "<text>"}}
//
// Codes name the error markers, most specific first: cycle,
// second_writer, epoch_backwards, checksum, corruption, out_of_range,
// invalid_argument, not_found, conflict, closed, deadline_exceeded,
// canceled, internal. The client rebuilds an error whose text is the
// server's and which matches the same markers with errors.Is (invariant
// api-same-errors), so callers classify errors the same in process and
// over the network.
//
// # Deadlines
//
// A call's deadline travels in the Strata-Timeout header (milliseconds
// left, as gRPC's grpc-timeout does). The server runs the call under that
// deadline minus a fifth (at least 2 ms), so a blocking call (WaitEpoch, a
// strong AcquireVersion) ends on the server first and the client gets the
// server's error, which names what it waited for, instead of a bare
// timeout. Cancelling the client's context closes the request, which
// cancels the server's context too.
//
// Request bodies are limited to MaxBodyBytes.
package api
