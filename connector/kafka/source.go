package kafka

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

// OpenReaders parses opts (ParseSourceOptions), asks the cluster for the
// topic's partitions and returns one Reader per partition, in partition
// order: the ingest job runs one source subtask per partition (subtask i
// reads partition i; see doc.go, Positions). dl receives bad records in
// dead-letter mode (nil otherwise). The Readers share one Errors.
func OpenReaders(ctx context.Context, opts map[string]string, cols []catalog.Column, dl format.DeadLetterFunc) ([]*Reader, error) {
	o, err := ParseSourceOptions(opts)
	if err != nil {
		return nil, err
	}
	errs, err := format.NewErrors(o.Errors, dl)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	parts, err := Partitions(ctx, o.Brokers, o.Topic)
	if err != nil {
		return nil, err
	}
	var rs []*Reader
	for _, p := range parts {
		r, err := NewReader(ReaderConfig{Brokers: o.Brokers, Topic: o.Topic, Partition: p, Startup: o.Startup,
			ReadCommitted: o.ReadCommitted, Columns: cols, Format: o.Format, Errors: errs})
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// Partitions returns the partition ids of topic, ascending. An unknown
// topic gives an error wrapping base.ErrNotFound.
func Partitions(ctx context.Context, brokers []string, topic string) ([]int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, fmt.Errorf("kafka topic %s: client: %v: %w", topic, err, base.ErrInvalidArgument)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("kafka topic %s: metadata: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if err == kerr.UnknownTopicOrPartition {
				return nil, fmt.Errorf("kafka topic %s: %v: %w", topic, err, base.ErrNotFound)
			}
			return nil, fmt.Errorf("kafka topic %s: %w", topic, err)
		}
		var ps []int32
		for _, p := range t.Partitions {
			ps = append(ps, p.Partition)
		}
		slices.Sort(ps)
		return ps, nil
	}
	return nil, fmt.Errorf("kafka topic %s: not in the metadata: %w", topic, base.ErrNotFound)
}
