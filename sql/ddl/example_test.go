package ddl_test

import (
	"fmt"

	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/sqlerr"
)

func ExampleParse() {
	stmts, err := ddl.Parse(`
		CREATE TABLE bid (auction BIGINT, price NUMERIC(10,2), date_time TIMESTAMP(3),
		  WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND)
		  WITH (connector = 'nexmark', nexmark.table = 'bid');
		CREATE MATERIALIZED VIEW avg_price AS SELECT auction, avg(price) AS p FROM bid GROUP BY auction;
		SELECT * FROM avg_price AS OF EPOCH 42`)
	if err != nil {
		panic(err)
	}
	ct := stmts[0].(*ddl.CreateTable)
	fmt.Println(ct.Name, ct.Columns[1].Type, ct.Watermark.Column, ct.Watermark.Delay, ct.With["nexmark.table"])
	fmt.Println(stmts[1].(*ddl.CreateView).QueryText)
	q := stmts[2].(*ddl.Query)
	fmt.Println(q.QueryText, *q.AtEpoch)

	_, err = ddl.Parse("CREATE TABLE t (a int, tags text[])")
	e := err.(*sqlerr.Error)
	fmt.Println(e.Code, e.Position, e.Message)
	// Output:
	// bid NUMERIC(10,2) date_time 4s bid
	// SELECT auction, avg(price) AS p FROM bid GROUP BY auction
	// SELECT * FROM avg_price 42
	// 0A000 29 column "tags": array type text[] is not supported
}
