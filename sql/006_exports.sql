-- Export tasks: the blob their file was written to, and the token buckets of the export rate limit.
ALTER TABLE tasks ADD COLUMN file_name text;

-- One row per bucket (e.g. `UserExport`): tokens left at `updated_at`, refilled evenly over time.
CREATE TABLE rate_limit_buckets (
  name       text PRIMARY KEY,
  tokens     double precision NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Percent-encodes text as a URI component (RFC 3986 unreserved characters kept), byte by byte of
-- its UTF-8 form: the label and issuer of a TOTP `otpauth://` URI in exports.
CREATE FUNCTION uri_component(value text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(
           CASE WHEN chr(b) ~ '^[A-Za-z0-9_.~-]$' THEN chr(b) ELSE '%' || upper(lpad(to_hex(b), 2, '0')) END,
           '' ORDER BY i), '')
    FROM (SELECT i, get_byte(bytes, i) AS b
            FROM (SELECT convert_to(value, 'UTF8') AS bytes) s, generate_series(0, length(bytes) - 1) i) t
$$;
