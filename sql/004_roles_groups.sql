-- Roles and groups with their memberships. Keys are the stable names used by import and export.
CREATE TABLE roles (
  id          uuid PRIMARY KEY,
  key         text NOT NULL UNIQUE,
  name        text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE groups (
  id          uuid PRIMARY KEY,
  key         text NOT NULL UNIQUE,
  name        text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_roles (
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role_id    uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, role_id)
);

CREATE TABLE user_groups (
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  group_id   uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, group_id)
);
