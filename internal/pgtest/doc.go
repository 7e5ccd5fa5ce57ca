// Package pgtest starts a private PostgreSQL server for tests: a cluster
// of its own in a temporary directory, configured for logical replication
// (wal_level=logical, max_replication_slots and max_wal_senders of 16),
// listening on a free loopback port and on a unix socket inside that
// directory, with trust authentication for the superuser postgres.
//
// # Lifecycle
//
//	srv := pgtest.Start(t)              // skips the test if PostgreSQL cannot be had
//	dsn := srv.CreateDatabase(t, "db1") // a database of its own per test
//	...                                 // on cleanup: immediate stop, directory removed
//
// Start finds initdb and pg_ctl on PATH, then in /usr/lib/postgresql/*/bin
// (the newest version first). When neither has them and the process runs as
// root, it installs Debian's postgresql package with apt-get (serialized
// between concurrent test processes by a lock file); otherwise the test is
// skipped with a message saying what is missing. As root it runs the server
// as the unprivileged user postgres (or nobody), because initdb refuses to
// run as root: the directory is handed to that user and the programs run
// with its credentials (syscall.Credential, no su needed).
//
// # Concurrency
//
// Every server has its own directory, port and socket, so several test
// processes (go test ./... runs packages in parallel) each start their own
// without sharing anything but the installation. The port is taken from
// the kernel (bind to port 0, then close); if another process grabs it
// before the server binds, Start retries with a new one.
//
// A test process that dies without cleaning up (killed, or past go test's
// timeout) leaves its server running; the next StartServer stops and
// removes every server whose starting process (owner.pid in its
// directory) is gone.
//
// The server is tuned for tests, not durability: fsync and full-page
// writes are off. Commits stay synchronous: a walsender sends only WAL
// that is flushed, so asynchronous commits would reach logical
// replication in bursts every wal_writer_delay.
package pgtest
