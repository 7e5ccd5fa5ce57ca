-- The upstream shop database in PostgreSQL. Run it once with psql:
--   psql -d shop -f examples/postgres-cdc/schema.sql
-- Logical replication needs wal_level = logical in postgresql.conf.
CREATE TABLE customers (
  id      INT PRIMARY KEY,
  name    TEXT NOT NULL,
  country TEXT NOT NULL
);
CREATE TABLE orders (
  id          BIGINT PRIMARY KEY,
  customer_id INT NOT NULL REFERENCES customers (id),
  amount      NUMERIC(12,2) NOT NULL,
  status      TEXT NOT NULL
);
CREATE TABLE payments (
  id       BIGINT PRIMARY KEY,
  order_id BIGINT NOT NULL REFERENCES orders (id),
  amount   NUMERIC(12,2) NOT NULL
);
-- Strata reads whole old rows of updates and deletes.
ALTER TABLE customers REPLICA IDENTITY FULL;
ALTER TABLE orders REPLICA IDENTITY FULL;
ALTER TABLE payments REPLICA IDENTITY FULL;
