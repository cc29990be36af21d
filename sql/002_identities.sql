-- Identities: login ids and OAuth connections in one table, so that every exact lookup of the
-- spec (4.5) is a single probe of a single index.
CREATE TABLE identities (
  id                  uuid PRIMARY KEY,
  user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type                text NOT NULL CHECK (type IN ('login_id', 'oauth')),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),

  -- type = 'login_id'
  login_id_key        text,
  login_id_type       text CHECK (login_id_type IN ('email', 'username', 'phone')),
  login_id            text,  -- normalized value
  original_login_id   text,  -- as submitted

  -- type = 'oauth'
  provider_alias      text,
  provider_type       text,
  provider_subject_id text,
  profile             jsonb,

  -- Provider claims (OAuth) or the claims a login id stands for.
  claims              jsonb NOT NULL DEFAULT '{}'::jsonb,

  -- The normalized standard attribute this identity carries, for getUsersByStandardAttribute.
  email               text,
  phone_number        text,
  preferred_username  text,

  CHECK (
    (type = 'login_id' AND login_id_key IS NOT NULL AND login_id_type IS NOT NULL
      AND login_id IS NOT NULL AND original_login_id IS NOT NULL)
    OR
    (type = 'oauth' AND provider_alias IS NOT NULL AND provider_type IS NOT NULL
      AND provider_subject_id IS NOT NULL)
  )
);

CREATE UNIQUE INDEX identities_login_id ON identities (login_id_key, login_id) WHERE type = 'login_id';
CREATE UNIQUE INDEX identities_oauth ON identities (provider_alias, provider_subject_id) WHERE type = 'oauth';
CREATE INDEX identities_email ON identities (email) WHERE email IS NOT NULL;
CREATE INDEX identities_phone_number ON identities (phone_number) WHERE phone_number IS NOT NULL;
CREATE INDEX identities_preferred_username ON identities (preferred_username) WHERE preferred_username IS NOT NULL;
CREATE INDEX identities_user_id ON identities (user_id);
