// Migration 12: the built-in identity provider's users, clients and signing keys. Secrets are kept
// only as salted scrypt hashes; a signing key's private half never leaves this table but to sign.

import type BetterSqlite3 from 'better-sqlite3';

export function up(db: BetterSqlite3.Database): void {
  db.exec(`
    -- roles and groups are JSON lists of strings; created_at is epoch milliseconds.
    CREATE TABLE idp_users (
      id            INTEGER PRIMARY KEY,
      username      TEXT    NOT NULL UNIQUE,
      sub           TEXT    NOT NULL UNIQUE,
      password_hash TEXT    NOT NULL,
      given_name    TEXT,
      family_name   TEXT,
      roles         TEXT    NOT NULL DEFAULT '[]',
      groups        TEXT    NOT NULL DEFAULT '[]',
      created_at    INTEGER NOT NULL
    );

    CREATE TABLE idp_clients (
      id          INTEGER PRIMARY KEY,
      client_id   TEXT    NOT NULL UNIQUE,
      sub         TEXT    NOT NULL UNIQUE,
      secret_hash TEXT    NOT NULL,
      roles       TEXT    NOT NULL DEFAULT '[]',
      groups      TEXT    NOT NULL DEFAULT '[]',
      created_at  INTEGER NOT NULL
    );

    -- JWKs as JSON; kid is the RFC 7638 thumbprint of the public key.
    CREATE TABLE idp_signing_keys (
      kid         TEXT    PRIMARY KEY,
      alg         TEXT    NOT NULL,
      private_jwk TEXT    NOT NULL,
      public_jwk  TEXT    NOT NULL,
      created_at  INTEGER NOT NULL
    );
  `);
}
