// Package producer writes the kafka-debezium example's change events: a
// shop's customers and orders, as Debezium would capture them from a
// database (JSON envelopes with before, after and op c/u/d), to the topics
// shop.customers and shop.orders, keyed by primary key. It keeps the
// database state the events describe, so a test can compare Strata's
// tables and views with it.
package producer
