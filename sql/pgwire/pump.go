package pgwire

import (
	"io"
	"net"
)

// pump reads the connection on a goroutine of its own and hands the bytes
// to the backend through a synchronous pipe: the backend reads what the
// pump read, one read buffer at a time, so the bytes in flight are bounded
// by the buffer (8 KiB) and the pipe gives backpressure. Because the pump
// is always blocked in a read of the connection, it sees a client go away
// at once, even while the connection's goroutine runs a statement, and
// then cancels the connection's context: the running statement stops, as
// with Postgres's client_connection_check_interval.
//
// Tried and dropped: peeking at the socket (recv with MSG_PEEK) from a
// watcher goroutine only while a statement runs. It needs the file
// descriptor under TLS, is not portable, and cannot see the end of the
// stream behind bytes the client pipelined.
type pump struct {
	pr   *io.PipeReader
	done chan struct{}
}

// pumpBuffer is the size of one read of the connection.
const pumpBuffer = 8 << 10

// startPump starts reading nc; gone is called once when a read fails (the
// client closed, reset, timed out, or the server closed nc).
func startPump(nc net.Conn, gone func()) *pump {
	pr, pw := io.Pipe()
	p := &pump{pr: pr, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, pumpBuffer)
		for {
			n, err := nc.Read(buf)
			if n > 0 {
				if _, werr := pw.Write(buf[:n]); werr != nil {
					// The reader side was closed by stop.
					gone()
					return
				}
			}
			if err != nil {
				gone()
				pw.CloseWithError(&readError{err})
				return
			}
		}
	}()
	return p
}

// Read gives the backend the bytes the pump read; a *readError once the
// connection's read failed.
func (p *pump) Read(b []byte) (int, error) { return p.pr.Read(b) }

// stop waits for the pump's goroutine to end. The caller closes the
// connection first, which ends the pump's read; closing the pipe ends a
// write that waits for a reader that will not come.
func (p *pump) stop() {
	p.pr.Close()
	<-p.done
}
