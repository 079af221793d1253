-- A monitor's down time within [p_since, p_until), minus the maintenance time given (ADR 0029):
-- the one sum every uptime figure reads. Incidents of a monitor never overlap: those in the window
-- are the ones started inside it and at most one started before it, each found by the index.
create function monitor_down_seconds(p_monitor uuid, p_since timestamptz, p_until timestamptz, p_maintenance tstzmultirange)
returns float8 language sql stable as $$
  select coalesce(sum(multirange_seconds(tstzmultirange(tstzrange(i.lo, greatest(i.lo, i.hi))) - p_maintenance)), 0)::float8
  from (
    select greatest(started_at, p_since) as lo, least(coalesce(ended_at, p_until), p_until) as hi
    from (
      select started_at, ended_at from incidents where monitor_id = p_monitor and started_at > p_since and started_at < p_until
      union all
      (select started_at, ended_at from incidents where monitor_id = p_monitor and started_at <= p_since order by started_at desc limit 1)
    ) x
    where coalesce(x.ended_at, p_until) > p_since
  ) i
$$;
