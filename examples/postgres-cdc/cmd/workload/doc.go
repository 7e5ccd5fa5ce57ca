// Command workload runs the postgres-cdc example's shop workload against a
// PostgreSQL database prepared with schema.sql:
//
//	go run ./examples/postgres-cdc/cmd/workload -dsn 'postgres://postgres@127.0.0.1:5432/shop' -rate 50
package main
