package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/stratadb/strata/examples/kafka-debezium/producer"
)

func main() {
	var cfg producer.Config
	brokers := flag.String("brokers", "127.0.0.1:9092", "Kafka brokers, comma separated")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	flag.IntVar(&cfg.Events, "n", 0, "events to write (0: until Ctrl-C)")
	flag.Float64Var(&cfg.Rate, "rate", 50, "events per second (0: as fast as possible)")
	flag.Parse()
	cfg.Brokers = strings.Split(*brokers, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, err := producer.Run(ctx, cfg)
	fmt.Printf("state: %d customers, %d orders\n", len(st.Customers), len(st.Orders))
	if err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(1)
	}
}
