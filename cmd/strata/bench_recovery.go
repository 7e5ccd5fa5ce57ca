package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata/bench/nexmark"
)

// recoveryResult is what `strata bench recovery` prints.
type recoveryResult struct {
	StateBytesTarget int64   `json:"state_bytes_target"`
	Events           uint64  `json:"events"`
	CheckpointBytes  int64   `json:"checkpoint_bytes"`
	SetupSeconds     float64 `json:"setup_seconds"`
	RecoveryMs       float64 `json:"recovery_ms"`
	// KilledExitMs is the part of RecoveryMs until the killed process had
	// exited (its memory released) and the restart began.
	KilledExitMs float64 `json:"killed_exit_ms"`
	// RecoveryCPUSeconds is the CPU time (user and system) the restarted
	// process used from its start to the first committed epoch.
	RecoveryCPUSeconds float64 `json:"recovery_cpu_seconds"`
	EpochBefore        uint64  `json:"epoch_before_kill"`
	EpochAfter         uint64  `json:"first_epoch_after_restart"`
	Verified           string  `json:"verified,omitempty"`
	EpochIntervalMs    float64 `json:"epoch_interval_ms"`
	CheckpointIntMs    float64 `json:"checkpoint_interval_ms"`
}

func newBenchRecoveryCommand() *cobra.Command {
	var asJSON, verify, keep bool
	var dir, child string
	var cfg nexmark.RecoveryConfig
	cmd := &cobra.Command{
		Use:   "recovery",
		Short: "Recovery time after kill -9 of a process holding a job with large keyed state",
		Long: `Starts strata as a child process running a view keyed by every Nexmark bid (state of about
--state-bytes bytes), waits until the view has committed every bid, kills the child with
SIGKILL, starts it again on the same data directory and prints recovery_ms: from the kill
to the first epoch the view commits after the restart. Also prints the size of the view
job's last checkpoint and (unless --verify=false) whether the recovered view equals its query
recomputed by DuckDB.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case cfg.StateBytes <= 0:
				return fmt.Errorf("--state-bytes %d: the keyed state must be at least 1 byte", cfg.StateBytes)
			case cfg.BidSize <= 0:
				return fmt.Errorf("--bid-size %d: must be at least 1 byte", cfg.BidSize)
			case int64(cfg.BidSize) > cfg.StateBytes:
				return fmt.Errorf("--bid-size %d is larger than --state-bytes %d: the state would hold at most one bid", cfg.BidSize, cfg.StateBytes)
			case cfg.EpochInterval <= 0:
				return fmt.Errorf("--epoch-interval %v: must be positive", cfg.EpochInterval)
			case cfg.CheckpointInterval <= 0:
				return fmt.Errorf("--checkpoint-interval %v: must be positive", cfg.CheckpointInterval)
			}
			ctx, cancel := benchContext()
			defer cancel()
			switch child {
			case "setup":
				return nexmark.RecoverySetup(ctx, dir, cfg, cmd.OutOrStdout())
			case "resume":
				return nexmark.RecoveryResume(ctx, dir, cfg, verify, cmd.OutOrStdout())
			case "":
			default:
				return fmt.Errorf("bench recovery: unknown --child %q", child)
			}
			if dir != "" {
				if err := checkEmptyDir("--dir", dir); err != nil {
					return err
				}
			}
			if dir == "" {
				d, err := os.MkdirTemp("", "strata-recovery-")
				if err != nil {
					return err
				}
				dir = d
				if !keep {
					defer os.RemoveAll(d)
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "strata bench recovery: %d events, about %d bytes of keyed state, in %s ...\n", cfg.Events(), cfg.StateBytes, dir)
			res, err := runRecovery(ctx, dir, cfg, verify, cmd.ErrOrStderr())
			if err != nil && ctx.Err() != nil {
				if res.RecoveryMs > 0 {
					// Recovered, then stopped while verifying: the
					// measure stands, unverified.
					res.Verified = "interrupted"
					if perr := printResult(cmd.OutOrStdout(), asJSON, res, func() string { return recoveryText(res) }); perr != nil {
						return perr
					}
					return fmt.Errorf("interrupted by a signal while verifying the recovered view: the recovery above was measured, not verified")
				}
				return fmt.Errorf("interrupted by a signal: nothing measured")
			}
			if err != nil {
				return err
			}
			return printResult(cmd.OutOrStdout(), asJSON, res, func() string { return recoveryText(res) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().Int64Var(&cfg.StateBytes, "state-bytes", 1<<30, "target size of the keyed state")
	cmd.Flags().IntVar(&cfg.BidSize, "bid-size", 1000, "average bid size in bytes (the nexmark bid.size option)")
	cmd.Flags().DurationVar(&cfg.EpochInterval, "epoch-interval", time.Second, "epoch_interval")
	cmd.Flags().DurationVar(&cfg.CheckpointInterval, "checkpoint-interval", time.Second, "checkpoint_interval")
	cmd.Flags().BoolVar(&verify, "verify", true, "after recovery, check the view against its query recomputed by DuckDB")
	cmd.Flags().StringVar(&dir, "dir", "", "data directory (a temporary one when empty)")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary data directory (a --dir is always kept)")
	cmd.Flags().StringVar(&child, "child", "", "internal: run as the benchmark's child process (setup or resume)")
	_ = cmd.Flags().MarkHidden("child")
	return cmd
}

// recoveryText is the text form of a recovery result.
func recoveryText(res recoveryResult) string {
	s := fmt.Sprintf("state: %d events, checkpoint %d bytes (set up in %.1f s)\nrecovery: %.0f ms from kill -9 to the first committed epoch (%d, before the kill %d), %.2f CPU seconds\n",
		res.Events, res.CheckpointBytes, res.SetupSeconds, res.RecoveryMs, res.EpochAfter, res.EpochBefore, res.RecoveryCPUSeconds)
	if res.Verified != "" {
		s += "verify: " + res.Verified + "\n"
	}
	return s
}

// recoveryChild is a child process of the recovery benchmark whose output
// lines are read as they come.
type recoveryChild struct {
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	log   bytes.Buffer // guarded by mu: everything it printed
	done  chan struct{}
}

func startRecoveryChild(dir, mode string, cfg nexmark.RecoveryConfig, verify bool) (*recoveryChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"bench", "recovery", "--child", mode, "--dir", dir,
		"--state-bytes", strconv.FormatInt(cfg.StateBytes, 10), "--bid-size", strconv.Itoa(cfg.BidSize),
		"--epoch-interval", cfg.EpochInterval.String(), "--checkpoint-interval", cfg.CheckpointInterval.String(),
		"--verify=" + strconv.FormatBool(verify)}
	c := &recoveryChild{cmd: exec.Command(exe, args...), lines: make(chan string, 16), done: make(chan struct{})}
	// A test binary acts as strata when STRATA_TEST_MAIN is set (main_test.go);
	// the strata binary ignores it.
	c.cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.log}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.log.WriteString(line + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- line:
			default: // nobody waits for it
			}
		}
		close(c.lines)
	}()
	return c, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// await returns the fields of the first line starting with prefix.
func (c *recoveryChild) await(ctx context.Context, prefix string) ([]string, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case line, ok := <-c.lines:
			if !ok {
				_ = c.cmd.Wait()
				c.mu.Lock()
				defer c.mu.Unlock()
				return nil, fmt.Errorf("bench recovery: the child exited before printing %q: %s", prefix, strings.TrimSpace(c.log.String()))
			}
			if f := strings.Fields(line); len(f) > 0 && f[0] == prefix {
				return f[1:], nil
			}
		}
	}
}

func (c *recoveryChild) stop() {
	_ = c.cmd.Process.Kill()
	<-c.done
	_ = c.cmd.Wait()
}

// runRecovery runs the benchmark: setup child, kill -9, resume child.
func runRecovery(ctx context.Context, dir string, cfg nexmark.RecoveryConfig, verify bool, progress io.Writer) (recoveryResult, error) {
	res := recoveryResult{StateBytesTarget: cfg.StateBytes, Events: cfg.Events(),
		EpochIntervalMs: float64(cfg.EpochInterval) / 1e6, CheckpointIntMs: float64(cfg.CheckpointInterval) / 1e6}
	start := time.Now()
	a, err := startRecoveryChild(dir, "setup", cfg, verify)
	if err != nil {
		return res, err
	}
	ready, err := a.await(ctx, nexmark.LineReady)
	if err != nil {
		a.stop()
		return res, err
	}
	res.SetupSeconds = time.Since(start).Seconds()
	if len(ready) >= 2 {
		res.CheckpointBytes, _ = strconv.ParseInt(ready[0], 10, 64)
		res.EpochBefore, _ = strconv.ParseUint(ready[1], 10, 64)
	}
	fmt.Fprintf(progress, "state ready after %.1f s (checkpoint %d bytes); kill -9\n", res.SetupSeconds, res.CheckpointBytes)
	killed := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		a.stop()
		return res, err
	}
	a.stop()
	res.KilledExitMs = float64(time.Since(killed)) / float64(time.Millisecond)
	b, err := startRecoveryChild(dir, "resume", cfg, verify)
	if err != nil {
		return res, err
	}
	defer b.stop()
	rec, err := b.await(ctx, nexmark.LineRecovered)
	if err != nil {
		return res, err
	}
	if len(rec) < 2 {
		return res, fmt.Errorf("bench recovery: bad line %q", strings.Join(rec, " "))
	}
	at, err := strconv.ParseInt(rec[0], 10, 64)
	if err != nil {
		return res, fmt.Errorf("bench recovery: bad time %q", rec[0])
	}
	res.RecoveryMs = float64(time.Unix(0, at).Sub(killed)) / float64(time.Millisecond)
	res.EpochAfter, _ = strconv.ParseUint(rec[1], 10, 64)
	if len(rec) >= 3 {
		cpu, _ := strconv.ParseInt(rec[2], 10, 64)
		res.RecoveryCPUSeconds = float64(cpu) / 1e9
	}
	fmt.Fprintf(progress, "recovered in %.0f ms (%.2f CPU seconds)\n", res.RecoveryMs, res.RecoveryCPUSeconds)
	if verify {
		v, err := b.await(ctx, nexmark.LineVerified)
		if err != nil {
			return res, err
		}
		res.Verified = strings.Join(v, " ")
	}
	return res, nil
}
