package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/server"
)

// errNotVerified is returned when a view differs from its recomputation
// (exit status 1); errVerifyFailed when a view could not be verified at
// all (exit status 2), so that scripts can tell the two apart.
var (
	errNotVerified  = errors.New("a view differs from its query recomputed")
	errVerifyFailed = errors.New("a view could not be verified")
)

func newVerifyCommand() *cobra.Command {
	var httpAddr, data string
	var epoch uint64
	cmd := &cobra.Command{
		Use:   "verify VIEW...",
		Short: "Recompute materialized views from their inputs at one epoch and compare",
		Long: `Recompute each named materialized view's SELECT over its inputs read at one
epoch (the view's committed epoch, or --epoch) and compare the result with
the stored view at that epoch. It asks a running Strata over HTTP (--http),
or, with --data, opens a stopped instance's data directory without running
its jobs. It prints the differences and exits 0 when every view is
verified, 1 when a view differs, 2 when a view could not be verified
(unknown, an epoch not kept, no server at --http, a data directory in use
or not a Strata data directory)
or the command line is wrong (an unknown flag, a bad --epoch).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				// A usage error verified nothing: exit 2, not 1.
				return cannotVerify{errors.New("name at least one materialized view to verify")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, views []string) (err error) {
			// Not reaching the views at all (no server answers, the data
			// directory is in use) is "could not verify" (exit 2), not a
			// difference (exit 1).
			verified := false
			defer func() {
				if err != nil && !verified {
					err = cannotVerify{err}
				}
			}()
			out := cmd.OutOrStdout()
			var results []server.VerifyResponse
			if data != "" {
				if err := requireDataDir(data); err != nil {
					return err
				}
				ctx := context.Background()
				e, err := engine.Open(ctx, engine.Options{Dir: data, NoJobs: true})
				if err != nil {
					return inUseHint(err, data)
				}
				defer e.Close()
				for _, v := range views {
					results = append(results, server.Verify(ctx, e, v, epoch))
				}
			} else {
				client := &http.Client{Timeout: 10 * time.Minute}
				for _, v := range views {
					q := url.Values{"view": {v}}
					if epoch > 0 {
						q.Set("epoch", strconv.FormatUint(epoch, 10))
					}
					resp, err := client.Get("http://" + httpAddr + "/verify?" + q.Encode())
					if err != nil {
						return fmt.Errorf("ask the running Strata at %s (or use --data): %w", httpAddr, err)
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						return err
					}
					if resp.StatusCode != http.StatusOK {
						return fmt.Errorf("verify %s: %s: %s", v, resp.Status, body)
					}
					var r server.VerifyResponse
					if err := json.Unmarshal(body, &r); err != nil {
						return fmt.Errorf("verify %s: answer %q: %w", v, body, err)
					}
					results = append(results, r)
				}
			}
			verified = true
			return reportVerify(out, results)
		},
	}
	// A bad flag (--bogus, --epoch -1) verified nothing either: exit 2,
	// not the 1 of a view that differs.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return cannotVerify{fmt.Errorf("%w (see strata verify --help)", err)}
	})
	cmd.Flags().StringVar(&httpAddr, "http", "127.0.0.1:8080", "HTTP address of the running Strata")
	cmd.Flags().StringVar(&data, "data", "", "verify a stopped instance's data directory instead")
	cmd.Flags().Uint64Var(&epoch, "epoch", 0, "epoch to verify at (default: each view's committed epoch)")
	return cmd
}

// inUseHint adds to err, the failure to open data directory dir, how to
// verify when a running server holds the directory (its meta store
// locked, a conflict): through that server's HTTP address.
func inUseHint(err error, dir string) error {
	if !errors.Is(err, base.ErrConflict) || !strings.Contains(err.Error(), "is locked") {
		return err
	}
	return fmt.Errorf("%w; the data directory %s is in use by a running strata server: verify through that server instead, with strata verify --http ADDR VIEW, ADDR being the server's --http address (default 127.0.0.1:8080)", err, dir)
}

// cannotVerify is an error that kept verify from reaching the views: it
// reads as its cause and counts as errVerifyFailed (exit status 2).
type cannotVerify struct{ err error }

func (c cannotVerify) Error() string { return c.err.Error() }

func (c cannotVerify) Unwrap() []error { return []error{c.err, errVerifyFailed} }

// byWhom says which engine recomputed a view (", recomputed by duckdb"),
// or nothing when a server too old to say did not.
func byWhom(by string) string {
	if by == "" {
		return ""
	}
	return ", recomputed by " + by
}

// reportVerify prints each result to out: verified (with the notes of a
// top-N view accepted for a tie at its cut-off), DIFFERS with the rows
// missing and extra and the notes explaining them, or could not verify.
// It returns errVerifyFailed when a view could not be verified (exit
// status 2), else errNotVerified when one differs (exit status 1), else
// nil.
func reportVerify(out io.Writer, results []server.VerifyResponse) error {
	bad, failed := false, false
	for _, r := range results {
		switch {
		case r.Error != "":
			failed = true
			fmt.Fprintf(out, "%s: could not verify: %s\n", r.View, r.Error)
		case r.OK:
			what := "rows"
			if r.Rows == 1 {
				what = "row"
			}
			fmt.Fprintf(out, "%s: verified at epoch %d (%d %s%s)\n", r.View, r.Epoch, r.Rows, what, byWhom(r.By))
			for _, n := range r.Notes {
				// A top-N view whose rows differ only among
				// rows tied at its cut-off says so.
				fmt.Fprintf(out, "  note: %s\n", n)
			}
		default:
			bad = true
			what := "rows"
			if len(r.Missing) == 1 {
				what = "row"
			}
			fmt.Fprintf(out, "%s: DIFFERS at epoch %d: %d %s missing, %d extra%s\n", r.View, r.Epoch, len(r.Missing), what, len(r.Extra), byWhom(r.By))
			printDiffRows(out, "missing", r.Missing)
			printDiffRows(out, "extra  ", r.Extra)
			for _, n := range r.Notes {
				fmt.Fprintf(out, "  note: %s\n", n)
			}
		}
	}
	if failed {
		return errVerifyFailed
	}
	if bad {
		return errNotVerified
	}
	return nil
}

// maxDiffRows bounds the differing rows printed for each side of a view
// that differs: enough to see what differs, not a page per row of a view
// that is wrong everywhere.
const maxDiffRows = 20

// printDiffRows prints rows as "  what row" lines, at most maxDiffRows,
// then how many more there are.
func printDiffRows(out io.Writer, what string, rows []string) {
	for i, r := range rows {
		if i == maxDiffRows {
			fmt.Fprintf(out, "  %s ... and %d more\n", what, len(rows)-i)
			return
		}
		fmt.Fprintf(out, "  %s %s\n", what, r)
	}
}
