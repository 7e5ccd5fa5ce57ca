-- The Strata side: run it with `strata sql -f examples/postgres-cdc/strata.sql`
-- (or psql) against `strata start`, after editing the connection options.
CREATE SOURCE shop WITH (
  connector = 'postgres-cdc', hostname = '127.0.0.1', port = '5432',
  username = 'postgres', password = '', database = 'shop',
  slot = 'strata_shop', publication = 'strata_shop');

CREATE TABLE customers (id INT PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL)
  FROM shop TABLE 'public.customers';
CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT NOT NULL, amount NUMERIC(12,2) NOT NULL, status TEXT NOT NULL)
  FROM shop TABLE 'public.orders';
CREATE TABLE payments (id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL, amount NUMERIC(12,2) NOT NULL)
  FROM shop TABLE 'public.payments';

-- Level 1: revenue per customer, and what each order has been paid.
CREATE MATERIALIZED VIEW customer_revenue AS
  SELECT c.id, c.name, c.country, count(o.id) AS orders, coalesce(sum(o.amount), 0) AS revenue
  FROM customers c LEFT JOIN orders o ON o.customer_id = c.id
  GROUP BY c.id, c.name, c.country;
CREATE MATERIALIZED VIEW order_payments AS
  SELECT o.id AS order_id, o.customer_id, o.amount, count(p.id) AS payments, coalesce(sum(p.amount), 0) AS paid
  FROM orders o LEFT JOIN payments p ON p.order_id = o.id
  GROUP BY o.id, o.customer_id, o.amount;

-- Level 2: revenue per country, and what is still due per customer.
CREATE MATERIALIZED VIEW country_revenue AS
  SELECT country, count(*) AS customers, sum(orders) AS orders, sum(revenue) AS revenue
  FROM customer_revenue GROUP BY country;
CREATE MATERIALIZED VIEW amounts_due AS
  SELECT customer_id, count(*) AS unpaid_orders, sum(amount - paid) AS due
  FROM order_payments WHERE paid < amount GROUP BY customer_id;
