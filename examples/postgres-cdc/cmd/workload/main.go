package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/stratadb/strata/examples/postgres-cdc/workload"
)

func main() {
	var cfg workload.Config
	flag.StringVar(&cfg.DSN, "dsn", "postgres://postgres@127.0.0.1:5432/shop?sslmode=disable", "the shop database")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flag.IntVar(&cfg.Transactions, "n", 0, "transactions to commit (0: until Ctrl-C)")
	flag.Float64Var(&cfg.Rate, "rate", 20, "transactions per second (0: as fast as possible)")
	flag.IntVar(&cfg.Customers, "customers", 50, "customers created before the first order")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start, last := time.Now(), time.Now()
	cfg.Progress = func(st workload.Stats) {
		if time.Since(last) < 5*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(os.Stderr, "workload: %d transactions in %v (%d orders, %d payments, %d cancellations)\n",
			st.Transactions, time.Since(start).Round(time.Second), st.Orders, st.Payments, st.Cancellations)
	}
	st, err := workload.Run(ctx, cfg)
	fmt.Printf("%d transactions: %d customers, %d orders, %d payments, %d adjustments, %d cancellations\n",
		st.Transactions, st.Customers, st.Orders, st.Payments, st.Adjustments, st.Cancellations)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(1)
	}
}
