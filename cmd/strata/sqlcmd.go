package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/stratadb/strata/sql/ddl"
)

func newSQLCommand() *cobra.Command {
	var addr, user, db, command, file string
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Run SQL against a running Strata (a small psql for people without one)",
		Long: `Run SQL against a running Strata over the Postgres wire protocol.
With -c it runs that text, with -f the file's; otherwise it reads
statements from the terminal (ending at ';') or from standard input.
Results print as aligned tables.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			dsn := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", user, addr, db)
			conn, err := pgconn.Connect(ctx, dsn)
			if err != nil {
				return fmt.Errorf("connect to %s: %w", addr, err)
			}
			defer conn.Close(context.Background())
			out := cmd.OutOrStdout()
			switch {
			case command != "":
				return runSQL(ctx, conn, command, out)
			case file != "":
				b, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				return runSQL(ctx, conn, string(b), out)
			}
			in := cmd.InOrStdin()
			f, isFile := in.(*os.File)
			if !isFile || !term.IsTerminal(int(f.Fd())) {
				b, err := io.ReadAll(in)
				if err != nil {
					return err
				}
				return runSQL(ctx, conn, string(b), out)
			}
			return interactive(ctx, conn, f, out)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4566", "address of the Strata server")
	cmd.Flags().StringVarP(&user, "user", "U", "root", "user name")
	cmd.Flags().StringVarP(&db, "database", "d", "dev", "database")
	cmd.Flags().StringVarP(&command, "command", "c", "", "SQL to run")
	cmd.Flags().StringVarP(&file, "file", "f", "", "file of SQL to run")
	return cmd
}

// interactive reads statements from a terminal line by line with a
// prompt, sending each complete statement (ended by ';').
func interactive(ctx context.Context, conn *pgconn.PgConn, in *os.File, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var buf strings.Builder
	prompt := func() {
		if buf.Len() == 0 {
			fmt.Fprint(out, "dev=> ")
		} else {
			fmt.Fprint(out, "dev-> ")
		}
	}
	prompt()
	for sc.Scan() {
		line := sc.Text()
		if buf.Len() == 0 && (strings.TrimSpace(line) == `\q` || strings.TrimSpace(line) == "exit" || strings.TrimSpace(line) == "quit") {
			return nil
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if complete(buf.String()) {
			if err := runSQL(ctx, conn, buf.String(), out); err != nil {
				fmt.Fprintln(out, err)
			}
			buf.Reset()
		}
		prompt()
	}
	fmt.Fprintln(out)
	return sc.Err()
}

// complete reports whether text ends with a statement terminator outside
// quotes and comments (Strata's own parser decides).
func complete(text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasSuffix(t, ";") {
		return false
	}
	_, err := ddl.Parse(t)
	var pe interface{ Error() string }
	// An unterminated string or comment is a syntax error at the end;
	// anything else is complete enough to send.
	if err != nil && errors.As(err, &pe) && strings.Contains(err.Error(), "unterminated") {
		return false
	}
	return true
}

// runSQL sends text with the simple query protocol and prints every
// statement's result.
func runSQL(ctx context.Context, conn *pgconn.PgConn, text string, out io.Writer) error {
	mrr := conn.Exec(ctx, text)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		fields := rr.FieldDescriptions()
		var rows [][]string
		for rr.NextRow() {
			vals := rr.Values()
			row := make([]string, len(vals))
			for i, v := range vals {
				if v == nil {
					row[i] = ""
				} else {
					row[i] = string(v)
				}
			}
			rows = append(rows, row)
		}
		tag, err := rr.Close()
		if err != nil {
			_ = mrr.Close()
			return err
		}
		if len(fields) > 0 {
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = f.Name
			}
			printTable(out, names, rows)
			continue
		}
		fmt.Fprintln(out, tag.String())
	}
	return mrr.Close()
}

// printTable prints rows under a header, columns padded to their widths,
// as psql's aligned format does, with the row count after.
func printTable(out io.Writer, names []string, rows [][]string) {
	w := make([]int, len(names))
	for i, n := range names {
		w[i] = utf8.RuneCountInString(n)
	}
	for _, r := range rows {
		for i, v := range r {
			w[i] = max(w[i], utf8.RuneCountInString(v))
		}
	}
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-utf8.RuneCountInString(s)) }
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(" | ")
		}
		left := (w[i] - utf8.RuneCountInString(n)) / 2
		b.WriteString(pad(strings.Repeat(" ", left)+n, w[i]))
	}
	b.WriteString("\n")
	for i := range names {
		if i > 0 {
			b.WriteString("-+-")
		}
		b.WriteString(strings.Repeat("-", w[i]))
	}
	b.WriteString("\n")
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(pad(v, w[i]))
		}
		b.WriteString("\n")
	}
	if len(rows) == 1 {
		b.WriteString("(1 row)\n\n")
	} else {
		fmt.Fprintf(&b, "(%d rows)\n\n", len(rows))
	}
	fmt.Fprint(out, strings.TrimRight(b.String(), " "))
}
