// Package workload generates a shop's transactional workload in
// PostgreSQL for the postgres-cdc example: customers sign up, place
// orders, pay them in one or more payments, have amounts adjusted and
// cancel orders, each business event one transaction over the tables of
// schema.sql.
package workload
