-- A status page may be private (ADR 0041): a password, stored as the product stores users'
-- (scrypt, salted), and an allow-list of client addresses (IPs or CIDR ranges). Either or both;
-- neither: the page is public to whoever has its address, as before. The existing trigger on
-- status_pages announces a change of either, so every process re-reads who may see the page.

alter table status_pages
  add column password_hash text,
  add column ip_allowlist text[] check (ip_allowlist is null or cardinality(ip_allowlist) between 1 and 100);
