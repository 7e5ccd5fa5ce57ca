package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// Config configures Run.
type Config struct {
	// DSN is the shop database's connection string.
	DSN string
	// Seed makes a run repeatable.
	Seed uint64
	// Transactions is how many transactions to commit (0: until ctx ends).
	Transactions int
	// Rate is transactions per second (0: as fast as possible).
	Rate float64
	// Customers is how many customers exist before orders start.
	Customers int
	// Progress, when set, is called with the counts so far after every
	// committed transaction.
	Progress func(Stats)
}

// Stats counts what Run committed.
type Stats struct {
	Transactions, Customers, Orders, Payments, Adjustments, Cancellations int
}

// Run commits the workload's transactions until cfg.Transactions or ctx
// ends. Every transaction keeps the shop consistent: a payment never
// exceeds what its order still owes, a paid order's status is 'paid', a
// cancelled order is deleted with its payments.
func Run(ctx context.Context, cfg Config) (Stats, error) {
	var st Stats
	conn, err := pgx.Connect(ctx, cfg.DSN)
	if err != nil {
		return st, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed))
	var maxCustomer, maxOrder, maxPayment int64
	if err := conn.QueryRow(ctx, `SELECT coalesce((SELECT max(id) FROM customers), 0), coalesce((SELECT max(id) FROM orders), 0),
		coalesce((SELECT max(id) FROM payments), 0)`).Scan(&maxCustomer, &maxOrder, &maxPayment); err != nil {
		return st, err
	}
	countries := []string{"DE", "FR", "NL", "SE", "US", "BR", "JP"}
	tx := func(f func(pgx.Tx) error) error {
		t, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		if err := f(t); err != nil {
			_ = t.Rollback(context.WithoutCancel(ctx))
			return err
		}
		return t.Commit(ctx)
	}
	var tick *time.Ticker
	if cfg.Rate > 0 {
		tick = time.NewTicker(time.Duration(float64(time.Second) / cfg.Rate))
		defer tick.Stop()
	}
	for cfg.Transactions == 0 || st.Transactions < cfg.Transactions {
		if tick != nil {
			select {
			case <-ctx.Done():
				return st, nil
			case <-tick.C:
			}
		} else if ctx.Err() != nil {
			return st, nil
		}
		p := r.IntN(100)
		var err error
		switch {
		case maxCustomer < int64(cfg.Customers) || p < 5: // a customer signs up
			maxCustomer++
			id := maxCustomer
			err = tx(func(t pgx.Tx) error {
				_, err := t.Exec(ctx, "INSERT INTO customers VALUES ($1, $2, $3)", id, fmt.Sprintf("customer %d", id), countries[r.IntN(len(countries))])
				return err
			})
			st.Customers++
		case p < 45 || maxOrder == 0: // an order
			maxOrder++
			id, cust := maxOrder, 1+r.Int64N(maxCustomer)
			amount := fmt.Sprintf("%d.%02d", 5+r.IntN(500), r.IntN(100))
			err = tx(func(t pgx.Tx) error {
				_, err := t.Exec(ctx, "INSERT INTO orders VALUES ($1, $2, $3::numeric, 'new')", id, cust, amount)
				return err
			})
			st.Orders++
		case p < 80: // a payment of part or all of what an open order owes
			order := 1 + r.Int64N(maxOrder)
			maxPayment++
			pay := maxPayment
			full := r.IntN(2) == 0
			err = tx(func(t pgx.Tx) error {
				var due string
				err := t.QueryRow(ctx, `SELECT (o.amount - coalesce((SELECT sum(amount) FROM payments WHERE order_id = o.id), 0))::text
					FROM orders o WHERE o.id = $1 AND o.status <> 'paid' FOR UPDATE`, order).Scan(&due)
				if err == pgx.ErrNoRows {
					return nil
				}
				if err != nil {
					return err
				}
				amount := due
				if !full {
					amount = "round(" + due + " / 2, 2)"
				}
				if _, err := t.Exec(ctx, "INSERT INTO payments VALUES ($1, $2, "+amount+")", pay, order); err != nil {
					return err
				}
				_, err = t.Exec(ctx, `UPDATE orders SET status = CASE WHEN amount <= (SELECT sum(amount) FROM payments WHERE order_id = $1)
					THEN 'paid' ELSE 'partly paid' END WHERE id = $1`, order)
				return err
			})
			st.Payments++
		case p < 92: // an adjustment of an unpaid order's amount
			order := 1 + r.Int64N(maxOrder)
			err = tx(func(t pgx.Tx) error {
				_, err := t.Exec(ctx, "UPDATE orders SET amount = amount + $2::numeric WHERE id = $1 AND status = 'new'", order, fmt.Sprintf("%d.25", r.IntN(20)))
				return err
			})
			st.Adjustments++
		default: // a cancellation: the order and its payments go
			order := 1 + r.Int64N(maxOrder)
			err = tx(func(t pgx.Tx) error {
				if _, err := t.Exec(ctx, "DELETE FROM payments WHERE order_id = $1", order); err != nil {
					return err
				}
				_, err := t.Exec(ctx, "DELETE FROM orders WHERE id = $1", order)
				return err
			})
			st.Cancellations++
		}
		if err != nil {
			if ctx.Err() != nil {
				return st, nil
			}
			return st, err
		}
		st.Transactions++
		if cfg.Progress != nil {
			cfg.Progress(st)
		}
	}
	return st, nil
}
