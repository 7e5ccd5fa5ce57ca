package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Superuser is the name of the cluster's superuser.
const Superuser = "postgres"

// Server is a running private PostgreSQL cluster.
type Server struct {
	// Host is the loopback address and Port the TCP port it listens on.
	Host string
	Port int
	// Dir is the cluster's temporary directory: data/, the log file
	// server.log and the unix socket.
	Dir string

	bin   string              // directory of initdb and pg_ctl
	cred  *syscall.Credential // nil when not running as root
	once  sync.Once
	stopE error
}

// ErrUnavailable is returned by StartServer when no PostgreSQL
// installation can be found or installed.
var ErrUnavailable = errors.New("pgtest: PostgreSQL is not available")

// Start starts a server for tb and stops and removes it when tb's test
// ends. It skips tb when PostgreSQL is unavailable (ErrUnavailable) and
// fails it on any other error.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := StartServer()
	if errors.Is(err, ErrUnavailable) {
		tb.Skipf("%v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return s
}

// Psql returns the path of the psql client of the PostgreSQL installation
// Start uses (installing Debian's postgresql package as Start does when
// none is found). It skips tb when PostgreSQL is unavailable
// (ErrUnavailable), as Start does.
func Psql(tb testing.TB) string {
	tb.Helper()
	bin, err := findOrInstall()
	if errors.Is(err, ErrUnavailable) {
		tb.Skipf("%v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(bin, "psql")
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("pgtest: no psql beside initdb in %s: %v", bin, err)
	}
	return p
}

// StartServer starts a server; the caller stops it with Stop. It returns
// an error wrapping ErrUnavailable when no installation can be had.
func StartServer() (*Server, error) {
	bin, err := findOrInstall()
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", bin: bin}
	if os.Geteuid() == 0 {
		s.cred, err = unprivileged()
		if err != nil {
			return nil, err
		}
	}
	parent := os.TempDir()
	if s.cred != nil && !traversable(parent) {
		parent = "/tmp" // the server's user must reach its directory
	}
	removeStale(parent, bin)
	s.Dir, err = os.MkdirTemp(parent, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(s.Dir)
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := s.init(); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	var last error
	for range 5 {
		if s.Port, err = freePort(); err != nil {
			break
		}
		if last = s.start(); last == nil {
			return s, nil
		}
		if !strings.Contains(last.Error(), "in use") && !strings.Contains(last.Error(), "could not bind") &&
			!strings.Contains(last.Error(), "could not create any TCP/IP sockets") {
			break
		}
	}
	if last == nil {
		last = err
	}
	os.RemoveAll(s.Dir)
	return nil, last
}

const (
	dirPrefix = "strata-pgtest-"
	// ownerFile holds the pid of the process that started the server.
	ownerFile = "owner.pid"
)

// traversable reports whether every directory from / to dir lets others
// through (o+x).
func traversable(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == "/" || d == "." {
			return true
		}
	}
}

// removeStale stops and removes the servers of test processes that died
// without cleaning up (killed, or timed out): a directory whose owner
// process is gone. A server whose owner lives is left alone.
func removeStale(parent, bin string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // being set up, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		var cred *syscall.Credential
		if os.Geteuid() == 0 {
			cred, _ = unprivileged()
		}
		runAs(cred, dir, filepath.Join(bin, "pg_ctl"), "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	}
}

// settings are appended to postgresql.conf: logical replication, and no
// durability (a test cluster is thrown away).
var settings = []string{
	"listen_addresses = '127.0.0.1'",
	"wal_level = logical",
	"max_replication_slots = 16",
	"max_wal_senders = 16",
	"max_connections = 60",
	"fsync = off",
	"full_page_writes = off",
	"wal_writer_delay = 10ms",
	"shared_buffers = 16MB",
	"wal_sender_timeout = 0",
	"log_min_messages = warning",
}

func (s *Server) init() error {
	if s.cred != nil {
		if err := os.Chown(s.Dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: chown %s: %w", s.Dir, err)
		}
	}
	data := filepath.Join(s.Dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", Superuser, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	_, err = f.WriteString("\n" + strings.Join(settings, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgtest: postgresql.conf: %w", err)
	}
	return nil
}

func (s *Server) start() error {
	data := filepath.Join(s.Dir, "data")
	log := filepath.Join(s.Dir, "server.log")
	opts := fmt.Sprintf("-p %d -k %s", s.Port, s.Dir)
	out, err := s.run("pg_ctl", "-D", data, "-l", log, "-w", "-t", "60", "-o", opts, "start")
	if err != nil {
		logText, _ := os.ReadFile(log)
		return fmt.Errorf("pgtest: pg_ctl start on port %d: %v\n%s\n%s", s.Port, err, out, logText)
	}
	return nil
}

// Stop stops the server at once (pg_ctl -m immediate) and removes its
// directory. It is idempotent.
func (s *Server) Stop() error {
	s.once.Do(func() {
		out, err := s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "immediate", "-w", "stop")
		if err != nil {
			s.stopE = fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
		}
		if err := os.RemoveAll(s.Dir); err != nil && s.stopE == nil {
			s.stopE = err
		}
	})
	return s.stopE
}

// DSN returns a key=value connection string for database db as the
// superuser over TCP.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", s.Host, s.Port, Superuser, db)
}

// CreateDatabase creates database name (a plain identifier) and returns
// its DSN; it fails tb on error.
func (s *Server) CreateDatabase(tb testing.TB, name string) string {
	tb.Helper()
	if !regexp.MustCompile(`^[a-z_][a-z0-9_]*$`).MatchString(name) {
		tb.Fatalf("pgtest: database name %q is not a plain identifier", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name).ReadAll(); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.DSN(name)
}

// run runs a program of the installation as the server's user.
func (s *Server) run(prog string, args ...string) ([]byte, error) {
	return runAs(s.cred, s.Dir, filepath.Join(s.bin, prog), args...)
}

func runAs(cred *syscall.Credential, dir, path string, args ...string) ([]byte, error) {
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C", "HOME="+dir)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd.CombinedOutput()
}

// unprivileged returns the credentials of the user postgres, or nobody.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("pgtest: running as root and neither user postgres nor nobody exists: %w", ErrUnavailable)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// findBin returns the directory holding initdb and pg_ctl, or "".
func findBin() string {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		_, err1 := os.Stat(filepath.Join(dir, "initdb"))
		_, err2 := os.Stat(filepath.Join(dir, "pg_ctl"))
		if err1 == nil && err2 == nil {
			return dir
		}
	}
	return ""
}

// version reads the major version of /usr/lib/postgresql/<v>/bin.
func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

var install struct {
	sync.Mutex
	bin string
	err error
	did bool
}

// findOrInstall returns the installation's bin directory, installing
// Debian's postgresql package first when running as root and none is
// found.
func findOrInstall() (string, error) {
	install.Lock()
	defer install.Unlock()
	if install.did {
		return install.bin, install.err
	}
	install.did = true
	install.bin = findBin()
	if install.bin != "" {
		return install.bin, nil
	}
	if os.Geteuid() != 0 {
		install.err = fmt.Errorf("%w: no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin, and not root to install the postgresql package", ErrUnavailable)
		return "", install.err
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		install.err = fmt.Errorf("%w: no initdb/pg_ctl found and no apt-get to install them", ErrUnavailable)
		return "", install.err
	}
	install.err = aptInstall()
	if install.err == nil {
		if install.bin = findBin(); install.bin == "" {
			install.err = fmt.Errorf("%w: the postgresql package installed no initdb/pg_ctl", ErrUnavailable)
		}
	}
	return install.bin, install.err
}

// aptInstall installs postgresql, holding a lock file so that concurrent
// test processes do not run apt-get at once.
func aptInstall() error {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "strata-pgtest-install.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("pgtest: install lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("pgtest: install lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if findBin() != "" { // another process installed it meanwhile
		return nil
	}
	apt := func(args ...string) ([]byte, error) {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	// The package's own cluster may fail to start under the installer
	// (policy-rc.d), which makes apt-get fail after the binaries are in
	// place: what counts is whether they are.
	args := []string{"install", "-y", "--no-install-recommends", "postgresql"}
	if _, err := apt(args...); err == nil || findBin() != "" {
		return nil
	}
	if out, err := apt("update"); err != nil {
		return fmt.Errorf("%w: apt-get update: %v\n%s", ErrUnavailable, err, out)
	}
	if out, err := apt(args...); err != nil && findBin() == "" {
		return fmt.Errorf("%w: apt-get install postgresql: %v\n%s", ErrUnavailable, err, out)
	}
	return nil
}
