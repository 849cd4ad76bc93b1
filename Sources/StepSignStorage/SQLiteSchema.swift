import GRDB

/// The SQLite schema, as named migrations.
///
/// Later changes add migrations at the end; a migration that has shipped is never edited.
/// Times are stored as REAL Unix seconds; booleans as 0/1 INTEGER. Tables are STRICT.
/// The user column is called `user_name` because `user` is reserved in SQL (PostgreSQL).
enum SQLiteSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-schema") { db in
            try db.execute(sql: v1)
        }
        return migrator
    }

    private static let v1 = """
        CREATE TABLE users (
            name TEXT NOT NULL PRIMARY KEY,
            password_hash TEXT NOT NULL,
            password_changed_at REAL NOT NULL,
            password_expired INTEGER NOT NULL DEFAULT 0 CHECK (password_expired IN (0, 1)),
            must_change_password INTEGER NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
            failed_attempts INTEGER NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
            blocked INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
            blocked_until REAL,
            created_at REAL NOT NULL
        ) STRICT;

        CREATE TABLE password_history (
            id INTEGER PRIMARY KEY,
            user_name TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
            hash TEXT NOT NULL,
            set_at REAL NOT NULL
        ) STRICT;
        CREATE INDEX password_history_by_user ON password_history(user_name, id);

        CREATE TABLE device_keys (
            kid TEXT NOT NULL PRIMARY KEY,
            user_name TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
            public_key_jwk TEXT NOT NULL,
            label TEXT NOT NULL,
            created_at REAL NOT NULL,
            revoked_at REAL
        ) STRICT;
        CREATE INDEX device_keys_by_user ON device_keys(user_name);

        CREATE TABLE activation_codes (
            user_name TEXT NOT NULL PRIMARY KEY REFERENCES users(name) ON DELETE CASCADE,
            code_hash TEXT NOT NULL,
            verification_key TEXT NOT NULL,
            expires_at REAL NOT NULL,
            failed_attempts INTEGER NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0)
        ) STRICT;

        CREATE TABLE signing_keys (
            kid TEXT NOT NULL PRIMARY KEY,
            created_at REAL NOT NULL,
            active INTEGER NOT NULL DEFAULT 0 CHECK (active IN (0, 1))
        ) STRICT;
        -- At most one active key; addSigningKey keeps it exactly one.
        CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys(active) WHERE active = 1;

        -- No foreign key to users: the ledger outlives removed users.
        CREATE TABLE ledger (
            seq INTEGER PRIMARY KEY CHECK (seq >= 1),
            signature_id TEXT NOT NULL UNIQUE,
            user_name TEXT NOT NULL,
            iat INTEGER NOT NULL,
            kid TEXT NOT NULL,
            jws TEXT NOT NULL,
            prev_hash BLOB NOT NULL CHECK (length(prev_hash) = 32),
            entry_hash BLOB NOT NULL CHECK (length(entry_hash) = 32),
            peer_uid INTEGER NOT NULL,
            peer_pid INTEGER NOT NULL,
            peer_comm TEXT NOT NULL,
            auth_level INTEGER NOT NULL,
            created_at REAL NOT NULL
        ) STRICT;
        -- Append-only against mistakes (not against someone who can edit the file: the hash
        -- chain and auditLedger are for that).
        CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
        CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
        """
}
