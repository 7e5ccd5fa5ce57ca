package nexmark

import (
	"fmt"
	"slices"
	"strings"

	gen "github.com/stratadb/strata/connector/nexmark"
)

// Query is one Nexmark query: its streaming form (a materialized view in
// Strata's PostgreSQL dialect) and its batch form (DuckDB SQL over the same
// three tables, loaded from Parquet), which must give the same rows.
type Query struct {
	// Name is q0 ... q22.
	Name string
	// Title is the query's name in the Nexmark suite.
	Title string
	// Tables are the Nexmark tables the query reads; only these are
	// created for its run.
	Tables []gen.Table
	// ProcTime is true for q12: bid gets a processing-time column p_time
	// (ProcTimeColumn), and the batch form reads table bid_proctime, the
	// (bidder, p_time) rows stored in bid at the view's epoch, since the
	// stamps are this run's ingestion times, not part of the events.
	ProcTime bool
	// SideInput is true for q13: the run writes a side-input CSV file of
	// SideInputRows (key, value) rows and creates table side_input over it
	// with the file connector.
	SideInput bool
	// View is the SELECT of the materialized view.
	View string
	// After are statements run once the view exists (q10's sink); a
	// failure of one makes the query unsupported.
	After []string
	// DuckDB is the batch form: a SELECT DuckDB runs over tables person,
	// auction, bid (and side_input) that gives the view's rows.
	DuckDB string
	// Note says where the translation departs from the reference query and
	// why.
	Note string
}

// SideInputRows is the number of rows of q13's side input, keyed 0 to
// SideInputRows-1 (the reference's side input has 10,000 keys).
const SideInputRows = 10_000

// hop expands each bid into the five 10-second windows, sliding by 2
// seconds, that HOP(bid, date_time, INTERVAL '2 seconds', INTERVAL '10
// seconds') puts it in.
const duckHopBids = `(SELECT b.*, time_bucket(INTERVAL '2 seconds', date_time) - i * INTERVAL '2 seconds' AS window_start,
    time_bucket(INTERVAL '2 seconds', date_time) - i * INTERVAL '2 seconds' + INTERVAL '10 seconds' AS window_end
  FROM bid b, range(5) AS r(i))`

// Queries are q0 to q22 in order. The reference is the Flink SQL of the
// Nexmark benchmark (github.com/nexmark/nexmark, nexmark-flink queries),
// with RisingWave's snake_case column names; each Note names the changes.
var Queries = []Query{
	{Name: "q0", Title: "pass through", Tables: []gen.Table{gen.Bid},
		View:   `SELECT auction, bidder, price, date_time, extra FROM bid`,
		DuckDB: `SELECT auction, bidder, price, date_time, extra FROM bid`},
	{Name: "q1", Title: "currency conversion", Tables: []gen.Table{gen.Bid},
		View:   `SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid`,
		DuckDB: `SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid`},
	{Name: "q2", Title: "selection", Tables: []gen.Table{gen.Bid},
		View:   `SELECT auction, price FROM bid WHERE auction % 123 = 0`,
		DuckDB: `SELECT auction, price FROM bid WHERE auction % 123 = 0`},
	{Name: "q3", Title: "local item suggestion", Tables: []gen.Table{gen.Person, gen.Auction},
		View: `SELECT p.name, p.city, p.state, a.id FROM auction AS a JOIN person AS p ON a.seller = p.id
WHERE a.category = 10 AND (p.state = 'OR' OR p.state = 'ID' OR p.state = 'CA')`,
		DuckDB: `SELECT p.name, p.city, p.state, a.id FROM auction AS a JOIN person AS p ON a.seller = p.id
WHERE a.category = 10 AND (p.state = 'OR' OR p.state = 'ID' OR p.state = 'CA')`},
	{Name: "q4", Title: "average price for a category", Tables: []gen.Table{gen.Auction, gen.Bid},
		View: `SELECT q.category, avg(q.final) AS avg_final FROM (
  SELECT max(b.price) AS final, a.category FROM auction AS a JOIN bid AS b ON a.id = b.auction
  WHERE b.date_time BETWEEN a.date_time AND a.expires GROUP BY a.id, a.category) AS q
GROUP BY q.category`,
		DuckDB: `SELECT q.category, avg(q.final) AS avg_final FROM (
  SELECT max(b.price) AS final, a.category FROM auction AS a JOIN bid AS b ON a.id = b.auction
  WHERE b.date_time BETWEEN a.date_time AND a.expires GROUP BY a.id, a.category) AS q
GROUP BY q.category`},
	{Name: "q5", Title: "hot items", Tables: []gen.Table{gen.Bid},
		View: `SELECT ab.auction, ab.num, ab.starttime, ab.endtime FROM (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM HOP(bid, date_time, INTERVAL '2 seconds', INTERVAL '10 seconds') GROUP BY auction, window_start, window_end) AS ab
JOIN (
  SELECT max(cb.num) AS maxn, cb.starttime, cb.endtime FROM (
    SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
    FROM HOP(bid, date_time, INTERVAL '2 seconds', INTERVAL '10 seconds') GROUP BY auction, window_start, window_end) AS cb
  GROUP BY cb.starttime, cb.endtime) AS mb
ON ab.starttime = mb.starttime AND ab.endtime = mb.endtime AND ab.num >= mb.maxn`,
		DuckDB: `SELECT ab.auction, ab.num, ab.starttime, ab.endtime FROM (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime FROM ` + duckHopBids + ` AS h
  GROUP BY auction, window_start, window_end) AS ab
JOIN (
  SELECT max(num) AS maxn, starttime, endtime FROM (
    SELECT count(*) AS num, window_start AS starttime, window_end AS endtime FROM ` + duckHopBids + ` AS h
    GROUP BY auction, window_start, window_end) AS cb
  GROUP BY starttime, endtime) AS mb
ON ab.starttime = mb.starttime AND ab.endtime = mb.endtime AND ab.num >= mb.maxn`,
		Note: "keeps the window's start and end in the output (the reference selects auction and num only), so that the view has a key"},
	{Name: "q6", Title: "average selling price by seller", Tables: []gen.Table{gen.Auction, gen.Bid},
		View: `SELECT seller, avg(final) AS avg_final FROM (
  SELECT seller, final, ROW_NUMBER() OVER (PARTITION BY seller ORDER BY expires DESC, id DESC) AS rn FROM (
    SELECT a.id, a.seller, a.expires, max(b.price) AS final FROM auction AS a JOIN bid AS b ON a.id = b.auction
    WHERE b.date_time BETWEEN a.date_time AND a.expires GROUP BY a.id, a.seller, a.expires) AS c) AS q
WHERE rn <= 10 GROUP BY seller`,
		DuckDB: `SELECT seller, avg(final) AS avg_final FROM (
  SELECT seller, final, ROW_NUMBER() OVER (PARTITION BY seller ORDER BY expires DESC, id DESC) AS rn FROM (
    SELECT a.id, a.seller, a.expires, max(b.price) AS final FROM auction AS a JOIN bid AS b ON a.id = b.auction
    WHERE b.date_time BETWEEN a.date_time AND a.expires GROUP BY a.id, a.seller, a.expires) AS c) AS q
WHERE rn <= 10 GROUP BY seller`,
		Note: "the average final price of each seller's last 10 auctions (by expiry) as a Top-N and an aggregate; the reference's AVG OVER (ROWS 10 PRECEDING), which Flink cannot run either, is an over-window Strata does not have"},
	{Name: "q7", Title: "highest bid", Tables: []gen.Table{gen.Bid},
		View: `SELECT b.auction, b.price, b.bidder, b.date_time, b.extra FROM bid AS b JOIN (
  SELECT max(price) AS maxprice, window_end AS date_time FROM TUMBLE(bid, date_time, INTERVAL '10 seconds')
  GROUP BY window_start, window_end) AS b1
ON b.price = b1.maxprice
WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10 seconds' AND b1.date_time`,
		DuckDB: `SELECT b.auction, b.price, b.bidder, b.date_time, b.extra FROM bid AS b JOIN (
  SELECT max(price) AS maxprice, time_bucket(INTERVAL '10 seconds', date_time) + INTERVAL '10 seconds' AS date_time FROM bid
  GROUP BY 2) AS b1
ON b.price = b1.maxprice
WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10 seconds' AND b1.date_time`},
	{Name: "q8", Title: "monitor new users", Tables: []gen.Table{gen.Person, gen.Auction},
		View: `SELECT p.id, p.name, p.starttime, p.endtime FROM (
  SELECT id, name, window_start AS starttime, window_end AS endtime FROM TUMBLE(person, date_time, INTERVAL '10 seconds')
  GROUP BY id, name, window_start, window_end) AS p
JOIN (
  SELECT seller, window_start AS starttime, window_end AS endtime FROM TUMBLE(auction, date_time, INTERVAL '10 seconds')
  GROUP BY seller, window_start, window_end) AS a
ON p.id = a.seller AND p.starttime = a.starttime AND p.endtime = a.endtime`,
		Note: "keeps the window's end in the output (the reference selects id, name and starttime), so that the view has a key",
		DuckDB: `SELECT p.id, p.name, p.starttime, p.starttime + INTERVAL '10 seconds' AS endtime FROM (
  SELECT id, name, time_bucket(INTERVAL '10 seconds', date_time) AS starttime FROM person GROUP BY 1, 2, 3) AS p
JOIN (
  SELECT seller, time_bucket(INTERVAL '10 seconds', date_time) AS starttime FROM auction GROUP BY 1, 2) AS a
ON p.id = a.seller AND p.starttime = a.starttime`},
	{Name: "q9", Title: "winning bids", Tables: []gen.Table{gen.Auction, gen.Bid},
		View: `SELECT id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra,
  auction, bidder, price, bid_date_time, bid_extra FROM (
  SELECT a.*, b.auction, b.bidder, b.price, b.date_time AS bid_date_time, b.extra AS bid_extra,
    ROW_NUMBER() OVER (PARTITION BY a.id ORDER BY b.price DESC, b.date_time ASC, b.bidder, b.extra) AS rownum
  FROM auction AS a JOIN bid AS b ON a.id = b.auction WHERE b.date_time BETWEEN a.date_time AND a.expires) AS q
WHERE rownum <= 1`,
		DuckDB: `SELECT id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra,
  auction, bidder, price, bid_date_time, bid_extra FROM (
  SELECT a.*, b.auction, b.bidder, b.price, b.date_time AS bid_date_time, b.extra AS bid_extra,
    ROW_NUMBER() OVER (PARTITION BY a.id ORDER BY b.price DESC, b.date_time ASC, b.bidder, b.extra) AS rownum
  FROM auction AS a JOIN bid AS b ON a.id = b.auction WHERE b.date_time BETWEEN a.date_time AND a.expires) AS q
WHERE rownum <= 1`,
		Note: "ties of price and time are broken by bidder and extra, so that the winner is deterministic"},
	{Name: "q10", Title: "log to file system", Tables: []gen.Table{gen.Bid},
		View:   `SELECT auction, bidder, price, date_time, extra, CAST(date_time AS DATE) AS dt, CAST(date_trunc('minute', date_time) AS TIME) AS hm FROM bid`,
		After:  []string{`CREATE SINK q10_sink FROM q10 WITH (connector = 'file', path = '{{dir}}/q10-out', format = 'csv')`},
		DuckDB: `SELECT auction, bidder, price, date_time, extra, CAST(date_time AS DATE) AS dt, CAST(date_trunc('minute', date_time) AS TIME) AS hm FROM bid`,
		Note:   "the reference writes partitioned files; the view is the transformation, the file sink is created after it; the day and minute are a DATE and a TIME (Strata has no to_char yet)"},
	{Name: "q11", Title: "user sessions", Tables: []gen.Table{gen.Bid},
		View: `SELECT bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM SESSION(bid, date_time, INTERVAL '10 seconds', partition_by => bidder) GROUP BY bidder, window_start, window_end`,
		DuckDB: `SELECT bidder, count(*) AS bid_count, min(date_time) AS starttime, max(date_time) + INTERVAL '10 seconds' AS endtime FROM (
  SELECT bidder, date_time, sum(brk) OVER (PARTITION BY bidder ORDER BY date_time ROWS UNBOUNDED PRECEDING) AS sid FROM (
    SELECT bidder, date_time, CASE WHEN date_time - lag(date_time) OVER (PARTITION BY bidder ORDER BY date_time) < INTERVAL '10 seconds' THEN 0 ELSE 1 END AS brk
    FROM bid) AS x) AS y
GROUP BY bidder, sid`},
	{Name: "q12", Title: "processing-time windows", Tables: []gen.Table{gen.Bid}, ProcTime: true,
		View: `SELECT bidder, count(*) AS bid_count, window_start, window_end FROM TUMBLE(bid, p_time, INTERVAL '10 seconds') GROUP BY bidder, window_start, window_end`,
		DuckDB: `SELECT bidder, count(*) AS bid_count, time_bucket(INTERVAL '10 seconds', p_time) AS window_start,
  time_bucket(INTERVAL '10 seconds', p_time) + INTERVAL '10 seconds' AS window_end
FROM bid_proctime GROUP BY bidder, window_start, window_end`,
		Note: "bid gets a processing-time column p_time TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED (RisingWave's p_time AS PROCTIME()), stamped at ingestion and stored; the batch form reads the stored (bidder, p_time) of bid at the view's epoch, since the stamps come from this run's clock and not from the events"},
	{Name: "q13", Title: "bounded side input join", Tables: []gen.Table{gen.Bid}, SideInput: true,
		View:   `SELECT b.auction, b.bidder, b.price, b.date_time, b.extra, s.value FROM bid AS b JOIN LOOKUP(side_input) AS s ON s.key = b.auction % 10000`,
		DuckDB: `SELECT b.auction, b.bidder, b.price, b.date_time, b.extra, s.value FROM bid AS b JOIN side_input AS s ON b.auction % 10000 = s.key`,
		Note:   "the side input is a CSV file read by the file connector into table side_input (keyed by key), joined as a lookup join, LOOKUP(side_input), read at each bid's epoch: the reference's processing-time lookup join (FOR SYSTEM_TIME AS OF), which keeps no state and gives append-only output"},
	{Name: "q14", Title: "calculation", Tables: []gen.Table{gen.Bid},
		View: `SELECT auction, bidder, 0.908 * price AS price,
  CASE WHEN extract(hour FROM date_time) >= 8 AND extract(hour FROM date_time) <= 18 THEN 'dayTime'
       WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
       ELSE 'otherTime' END AS bid_time_type,
  date_time, extra, length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000`,
		DuckDB: `SELECT auction, bidder, 0.908 * price AS price,
  CASE WHEN extract(hour FROM date_time) >= 8 AND extract(hour FROM date_time) <= 18 THEN 'dayTime'
       WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
       ELSE 'otherTime' END AS bid_time_type,
  date_time, extra, length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000`,
		Note: "the reference's count_char UDF is length(extra) - length(replace(extra, 'c', ''))"},
	{Name: "q15", Title: "bidding statistics report", Tables: []gen.Table{gen.Bid},
		View: `SELECT CAST(date_time AS DATE) AS day, count(*) AS total_bids,
  count(*) FILTER (WHERE price < 10000) AS rank1_bids,
  count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
  count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
  count(DISTINCT bidder) AS total_bidders,
  count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
  count(DISTINCT auction) AS total_auctions,
  count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM bid GROUP BY CAST(date_time AS DATE)`,
		DuckDB: `SELECT CAST(date_time AS DATE) AS day, count(*) AS total_bids,
  count(*) FILTER (WHERE price < 10000) AS rank1_bids,
  count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
  count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
  count(DISTINCT bidder) AS total_bidders,
  count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
  count(DISTINCT auction) AS total_auctions,
  count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM bid GROUP BY 1`,
		Note: "DATE_FORMAT(date_time, 'yyyy-MM-dd') is CAST(date_time AS DATE) (Strata has no to_char yet)"},
	{Name: "q16", Title: "channel statistics report", Tables: []gen.Table{gen.Bid},
		View: `SELECT channel, CAST(date_time AS DATE) AS day, max(CAST(date_trunc('minute', date_time) AS TIME)) AS minute,
  count(*) AS total_bids,
  count(*) FILTER (WHERE price < 10000) AS rank1_bids,
  count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
  count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
  count(DISTINCT bidder) AS total_bidders,
  count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
  count(DISTINCT auction) AS total_auctions,
  count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM bid GROUP BY channel, CAST(date_time AS DATE)`,
		DuckDB: `SELECT channel, CAST(date_time AS DATE) AS day, max(CAST(date_trunc('minute', date_time) AS TIME)) AS minute,
  count(*) AS total_bids,
  count(*) FILTER (WHERE price < 10000) AS rank1_bids,
  count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
  count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
  count(DISTINCT bidder) AS total_bidders,
  count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
  count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
  count(DISTINCT auction) AS total_auctions,
  count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
  count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM bid GROUP BY 1, 2`,
		Note: "DATE_FORMAT(date_time, 'yyyy-MM-dd') is CAST(date_time AS DATE) and 'HH:mm' the minute as a TIME (Strata has no to_char yet)"},
	{Name: "q17", Title: "auction statistics report", Tables: []gen.Table{gen.Bid},
		View: `SELECT auction, CAST(date_time AS DATE) AS day, count(*) AS total_bids,
  count(*) FILTER (WHERE price < 10000) AS rank1_bids,
  count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
  count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
  min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
FROM bid GROUP BY auction, CAST(date_time AS DATE)`,
		DuckDB: `SELECT auction, CAST(date_time AS DATE) AS day, count(*) AS total_bids,
  count(*) FILTER (WHERE price < 10000) AS rank1_bids,
  count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
  count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
  min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
FROM bid GROUP BY 1, 2`,
		Note: "DATE_FORMAT(date_time, 'yyyy-MM-dd') is CAST(date_time AS DATE) (Strata has no to_char yet)"},
	{Name: "q18", Title: "find last bid", Tables: []gen.Table{gen.Bid},
		View: `SELECT auction, bidder, price, channel, url, date_time, extra FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC, price DESC, extra) AS rank_number FROM bid) AS q
WHERE rank_number <= 1`,
		DuckDB: `SELECT auction, bidder, price, channel, url, date_time, extra FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC, price DESC, extra) AS rank_number FROM bid) AS q
WHERE rank_number <= 1`,
		Note: "ties of date_time are broken by price and extra, so that the last bid is deterministic"},
	{Name: "q19", Title: "auction top-10 price", Tables: []gen.Table{gen.Bid},
		View: `SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, date_time, extra) AS rank_number FROM bid) AS q
WHERE rank_number <= 10`,
		DuckDB: `SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, date_time, extra) AS rank_number FROM bid) AS q
WHERE rank_number <= 10`,
		Note: "ties of price are broken by date_time and extra, so that ranks are deterministic"},
	{Name: "q20", Title: "expand bid with auction", Tables: []gen.Table{gen.Auction, gen.Bid},
		View: `SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.date_time AS bid_date_time, b.extra AS bid_extra,
  a.item_name, a.description, a.initial_bid, a.reserve, a.date_time AS auction_date_time, a.expires, a.seller, a.category, a.extra AS auction_extra
FROM bid AS b JOIN auction AS a ON b.auction = a.id WHERE a.category = 10`,
		DuckDB: `SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.date_time AS bid_date_time, b.extra AS bid_extra,
  a.item_name, a.description, a.initial_bid, a.reserve, a.date_time AS auction_date_time, a.expires, a.seller, a.category, a.extra AS auction_extra
FROM bid AS b JOIN auction AS a ON b.auction = a.id WHERE a.category = 10`,
		Note: "the two date_time and extra columns are renamed, as a view's columns need distinct names"},
	{Name: "q21", Title: "add channel id", Tables: []gen.Table{gen.Bid},
		View: `SELECT auction, bidder, price, channel,
  CASE WHEN lower(channel) = 'apple' THEN '0' WHEN lower(channel) = 'google' THEN '1'
       WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3'
       ELSE substring(url FROM '(?:&|^)channel_id=([^&]*)') END AS channel_id
FROM bid WHERE substring(url FROM '(?:&|^)channel_id=([^&]*)') IS NOT NULL OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')`,
		DuckDB: `SELECT auction, bidder, price, channel,
  CASE WHEN lower(channel) = 'apple' THEN '0' WHEN lower(channel) = 'google' THEN '1'
       WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3'
       ELSE nullif(regexp_extract(url, '(&|^)channel_id=([^&]*)', 2), '') END AS channel_id
FROM bid WHERE nullif(regexp_extract(url, '(&|^)channel_id=([^&]*)', 2), '') IS NOT NULL OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')`,
		Note: "REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is PostgreSQL's substring(url FROM '(?:&|^)channel_id=([^&]*)')"},
	{Name: "q22", Title: "get URL directories", Tables: []gen.Table{gen.Bid},
		View:   `SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid`,
		DuckDB: `SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid`,
		Note:   "Flink's SPLIT_INDEX counts from 0, split_part from 1"},
}

// Ingest is the baseline beside the queries: the three Nexmark tables
// filled and committed, with no view. Its CPU seconds are the part of
// every query's that is generating events and writing input tables.
var Ingest = Query{Name: "ingest", Title: "input tables only, no view", Tables: []gen.Table{gen.Person, gen.Auction, gen.Bid},
	Note: "the baseline: person, auction and bid filled and committed, no view"}

// Select returns the queries named in spec: "all" (or empty) for every
// query, else a comma-separated list such as "q0,q5,q7" that may also name
// "ingest" (Ingest). An unknown name is an error naming it.
func Select(spec string) ([]Query, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "all" {
		return slices.Clone(Queries), nil
	}
	var out []Query
	for _, name := range strings.Split(spec, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == Ingest.Name {
			out = append(out, Ingest)
			continue
		}
		i := slices.IndexFunc(Queries, func(q Query) bool { return q.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("nexmark bench: unknown query %q (q0 to q22, ingest, or all)", name)
		}
		out = append(out, Queries[i])
	}
	return out, nil
}
