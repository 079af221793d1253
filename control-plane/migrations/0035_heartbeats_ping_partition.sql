-- The deadline role loads the heartbeats of the PINGS partitions it holds (ADR 0044). The
-- partition is the first 32 bits of md5(id) modulo PING_PARTITIONS (shared/src/pings/partition.ts);
-- without an index every load reads and hashes the whole table, whatever share it wants. This
-- index serves the default count, 16: a deployment with another count keeps correct loads that
-- scan the table, and may create the same index with its own count (docs/operations.md).
create index heartbeats_ping_partition_16_idx
  on heartbeats (((('x' || left(md5(id::text), 8))::bit(32)::bigint % 16)::int));
