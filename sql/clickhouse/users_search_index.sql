-- On ClickHouse releases with data skipping indexes (20.x and later, the compose image): an n-gram
-- bloom filter that lets LIKE '%keyword%' skip granules. 18.16 (Debian's) has none; the table
-- works without it.
ALTER TABLE {table} ADD INDEX IF NOT EXISTS search_text_ngrams search_text TYPE ngrambf_v1(3, 8192, 3, 0) GRANULARITY 4
