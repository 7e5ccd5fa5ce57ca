// Command producer writes the kafka-debezium example's Debezium change
// events to a Kafka cluster:
//
//	go run ./examples/kafka-debezium/cmd/producer -brokers 127.0.0.1:9092 -rate 50
package main
