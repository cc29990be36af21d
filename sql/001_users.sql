-- Users: one row per account. Standard attributes other than the verified flags live in a jsonb
-- document (decisions 2.4 record fields); email, phone_number and preferred_username there mirror the
-- normalized login ids. Custom attributes are a separate document keyed by declared name.
CREATE TABLE users (
  id                  uuid PRIMARY KEY,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  is_disabled         boolean NOT NULL DEFAULT false,
  standard_attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
  custom_attributes   jsonb NOT NULL DEFAULT '{}'::jsonb,
  CHECK (jsonb_typeof(standard_attributes) = 'object'),
  CHECK (jsonb_typeof(custom_attributes) = 'object')
);

-- Export and the list lookup order users by creation time, then id.
CREATE INDEX users_created_at_id ON users (created_at, id);

-- Verified claims: email_verified / phone_number_verified are true when the user's current value
-- has a row here.
CREATE TABLE verified_claims (
  id         uuid PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name       text NOT NULL CHECK (name IN ('email', 'phone_number')),
  value      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, name, value)
);
