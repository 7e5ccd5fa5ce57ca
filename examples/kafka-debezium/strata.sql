-- Tables over Kafka topics of Debezium JSON change events, and views over
-- them. Run with `strata sql -f examples/kafka-debezium/strata.sql` against
-- `strata start`, after editing the broker address.
CREATE TABLE customers (id INT PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL)
  WITH (connector = 'kafka', properties.bootstrap.server = '127.0.0.1:9092',
        topic = 'shop.customers', format = 'debezium-json');
CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT NOT NULL, amount NUMERIC(12,2) NOT NULL, status TEXT NOT NULL)
  WITH (connector = 'kafka', properties.bootstrap.server = '127.0.0.1:9092',
        topic = 'shop.orders', format = 'debezium-json');

CREATE MATERIALIZED VIEW customer_revenue AS
  SELECT c.id, c.name, c.country, count(o.id) AS orders, coalesce(sum(o.amount), 0) AS revenue
  FROM customers c LEFT JOIN orders o ON o.customer_id = c.id
  GROUP BY c.id, c.name, c.country;
CREATE MATERIALIZED VIEW country_revenue AS
  SELECT country, count(*) AS customers, sum(orders) AS orders, sum(revenue) AS revenue
  FROM customer_revenue GROUP BY country;
CREATE MATERIALIZED VIEW status_counts AS
  SELECT status, count(*) AS orders, sum(amount) AS amount FROM orders GROUP BY status;
