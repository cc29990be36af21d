-- The search index of users(searchKeyword): one row per version of a user, the newest kept
-- (ReplacingMergeTree on `version`; queries read it FINAL). `{table}` is the qualified table name.
-- search_text: email, username, phone number, name, given and family name and id, lowercased and
-- apart by a unit separator (0x1F), matched with LIKE '%keyword%'. Times in microseconds since the
-- epoch (ClickHouse 18.16 has no DateTime64); last_login_us is the smallest Int64 for "never".
CREATE TABLE IF NOT EXISTS {table} (
  project_id    String,
  user_id       String,
  version       UInt64,
  deleted       UInt8,
  search_text   String,
  created_us    Int64,
  last_login_us Int64,
  roles         Array(String),
  groups        Array(String)
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, user_id)
