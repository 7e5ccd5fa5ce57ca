package producer

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Customer and Order are rows of the shop's tables.
type Customer struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	Country string `json:"country"`
}

// Order is an order row; Amount is a NUMERIC(12,2) as text.
type Order struct {
	ID         int64  `json:"id"`
	CustomerID int    `json:"customer_id"`
	Amount     string `json:"amount"`
	Status     string `json:"status"`
}

// State is the database the events describe.
type State struct {
	Customers map[int]Customer
	Orders    map[int64]Order
}

type envelope struct {
	Before any    `json:"before"`
	After  any    `json:"after"`
	Op     string `json:"op"`
}

// Config configures Run.
type Config struct {
	Brokers []string
	Seed    uint64
	// Events is how many change events to write (0: until ctx ends).
	Events int
	// Rate is events per second (0: as fast as possible).
	Rate float64
}

// Run writes change events until cfg.Events or ctx ends and returns the
// state they describe. Each event is produced synchronously, so when Run
// returns every event in the state is in Kafka.
func Run(ctx context.Context, cfg Config) (State, error) {
	st := State{Customers: map[int]Customer{}, Orders: map[int64]Order{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		return st, err
	}
	defer cl.Close()
	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0xd3b))
	countries := []string{"DE", "FR", "NL", "SE", "US"}
	statuses := []string{"new", "paid", "shipped"}
	send := func(topic, key string, e envelope) error {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: b}).FirstErr()
	}
	var tick *time.Ticker
	if cfg.Rate > 0 {
		tick = time.NewTicker(time.Duration(float64(time.Second) / cfg.Rate))
		defer tick.Stop()
	}
	nextCustomer, nextOrder := 1, int64(1)
	for n := 0; cfg.Events == 0 || n < cfg.Events; n++ {
		if tick != nil {
			select {
			case <-ctx.Done():
				return st, nil
			case <-tick.C:
			}
		} else if ctx.Err() != nil {
			return st, nil
		}
		var err error
		switch p := r.IntN(100); {
		case len(st.Customers) < 10 || p < 10:
			c := Customer{ID: nextCustomer, Name: fmt.Sprintf("customer %d", nextCustomer), Country: countries[r.IntN(len(countries))]}
			nextCustomer++
			if err = send("shop.customers", strconv.Itoa(c.ID), envelope{After: c, Op: "c"}); err == nil {
				st.Customers[c.ID] = c
			}
		case p < 55 || len(st.Orders) == 0:
			o := Order{ID: nextOrder, CustomerID: 1 + r.IntN(nextCustomer-1), Amount: fmt.Sprintf("%d.%02d", 1+r.IntN(300), r.IntN(100)), Status: "new"}
			nextOrder++
			if _, ok := st.Customers[o.CustomerID]; !ok {
				continue
			}
			if err = send("shop.orders", strconv.FormatInt(o.ID, 10), envelope{After: o, Op: "c"}); err == nil {
				st.Orders[o.ID] = o
			}
		case p < 90:
			o, ok := st.Orders[1+r.Int64N(nextOrder-1)]
			if !ok {
				continue
			}
			after := o
			after.Status = statuses[r.IntN(len(statuses))]
			after.Amount = fmt.Sprintf("%d.%02d", 1+r.IntN(300), r.IntN(100))
			if err = send("shop.orders", strconv.FormatInt(o.ID, 10), envelope{Before: o, After: after, Op: "u"}); err == nil {
				st.Orders[o.ID] = after
			}
		default:
			o, ok := st.Orders[1+r.Int64N(nextOrder-1)]
			if !ok {
				continue
			}
			if err = send("shop.orders", strconv.FormatInt(o.ID, 10), envelope{Before: o, Op: "d"}); err == nil {
				delete(st.Orders, o.ID)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return st, nil
			}
			return st, err
		}
	}
	return st, nil
}
