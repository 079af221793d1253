-- An integration's message template (ADR 0033): {"title"?: text, "body"?: text}, or null for the
-- standard wording. Checked by the API (tags, variables, lengths) before it is stored.
alter table integrations add column template jsonb;
