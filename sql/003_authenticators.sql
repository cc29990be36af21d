-- Authenticators: primary password (bcrypt, optional expiry), secondary password, OOB OTP by
-- email or phone, TOTP. Secrets never leave this table through the API.
CREATE TABLE authenticators (
  id                    uuid PRIMARY KEY,
  user_id               uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind                  text NOT NULL CHECK (kind IN ('primary', 'secondary')),
  type                  text NOT NULL CHECK (type IN ('password', 'oob_otp_email', 'oob_otp_sms', 'totp')),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  password_hash         text,
  password_expire_after timestamptz,
  email                 text,
  phone                 text,
  totp_secret           text,
  CHECK (
    (type = 'password' AND password_hash IS NOT NULL)
    OR (type = 'oob_otp_email' AND email IS NOT NULL)
    OR (type = 'oob_otp_sms' AND phone IS NOT NULL)
    OR (type = 'totp' AND totp_secret IS NOT NULL)
  )
);

-- One primary password, one secondary password, one OOB email, one OOB phone per user.
CREATE UNIQUE INDEX authenticators_one_per_kind ON authenticators (user_id, kind, type) WHERE type <> 'totp';
CREATE INDEX authenticators_user_id ON authenticators (user_id);
