import Foundation
import GRDB
import StepSignCrypto

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
        migrator.registerMigration("v2-counters") { db in
            try db.execute(sql: v2)
            try db.execute(
                sql: "INSERT INTO store_secrets (name, value) VALUES ('name_key', ?)",
                arguments: [Data(try SecureRandom.bytes(count: 32))]
            )
        }
        migrator.registerMigration("v3-credential-tokens") { db in
            try db.execute(sql: v3)
            // Every existing user gets a token of their own (no login survives an upgrade
            // anyway: sessions live in memory).
            for name in try String.fetchAll(db, sql: "SELECT name FROM users") {
                try db.execute(sql: "UPDATE users SET credential_token = ? WHERE name = ?",
                               arguments: [try CredentialToken.random().bytes, name])
            }
        }
        migrator.registerMigration("v4-ledger-checkpoints") { db in
            try db.execute(sql: v4)
        }
        migrator.registerMigration("v5-signing-keys-per-instance") { db in
            try db.execute(sql: v5)
        }
        migrator.registerMigration("v6-key-endorsements") { db in
            try db.execute(sql: v6)
        }
        migrator.registerMigration("v7-sealed-credentials") { db in
            try db.execute(sql: v7)
        }
        migrator.registerMigration("v8-merkle-tree") { db in
            try db.execute(sql: v8)
            try SQLiteStore.buildTree(db)
        }
        migrator.registerMigration("v9-log-checkpoints") { db in
            try db.execute(sql: v9)
        }
        migrator.registerMigration("v10-log-cosignatures") { db in
            try db.execute(sql: v10)
        }
        migrator.registerMigration("v11-approvals-and-groups") { db in
            try db.execute(sql: v11)
        }
        migrator.registerMigration("v12-log-epochs") { db in
            try db.execute(sql: v12)
        }
        migrator.registerMigration("v13-attempt-reservations") { db in
            try db.execute(sql: v13)
        }
        migrator.registerMigration("v14-name-keys-and-approval-state") { db in
            try db.execute(sql: v14)
            try SQLiteStore.fillNameKeys(db)
            try SQLiteStore.indexApprovalEvents(db)
        }
        migrator.registerMigration("v15-idempotency-keys") { db in
            try db.execute(sql: v15)
        }
        migrator.registerMigration("v16-fido2-credentials") { db in
            try db.execute(sql: v16)
        }
        migrator.registerMigration("v17-log-cosignatures-by-line") { db in
            try db.execute(sql: v17)
        }
        migrator.registerMigration("v18-revoked-key-checked-per-batch") { db in
            try db.execute(sql: v18)
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

    /// Counters that hold under concurrency (SPEC §5.1): attempts of names that are not users,
    /// the activation-code budget of every name, and values that may be used only once.
    /// Names are stored only as HMAC-SHA-256 under `store_secrets.name_key`, so the tables do
    /// not list what people typed into the user field (often a password by mistake).
    private static let v2 = """
        CREATE TABLE store_secrets (
            name TEXT NOT NULL PRIMARY KEY,
            value BLOB NOT NULL
        ) STRICT;

        -- The attempt counters of names that are not users; users keep theirs in users.
        CREATE TABLE name_counters (
            name_key BLOB NOT NULL PRIMARY KEY CHECK (length(name_key) = 32),
            failed_attempts INTEGER NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
            blocked INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
            blocked_until REAL,
            updated_at REAL NOT NULL
        ) STRICT;
        CREATE INDEX name_counters_by_age ON name_counters(updated_at);

        -- Forgot password, per name (user or not): codes issued and wrong codes in the window.
        CREATE TABLE activation_budgets (
            name_key BLOB NOT NULL PRIMARY KEY CHECK (length(name_key) = 32),
            window_start REAL NOT NULL,
            codes_issued INTEGER NOT NULL DEFAULT 0 CHECK (codes_issued >= 0),
            failed_attempts INTEGER NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0)
        ) STRICT;
        CREATE INDEX activation_budgets_by_age ON activation_budgets(window_start);

        -- Nonces and assertion IDs already used, kept until they could no longer be accepted.
        CREATE TABLE used_once (
            value TEXT NOT NULL PRIMARY KEY,
            expires_at REAL NOT NULL
        ) STRICT;
        CREATE INDEX used_once_by_expiry ON used_once(expires_at);
        """

    /// Logins end on credential events (SPEC §3): a random token per user, made new by every
    /// password change, expiry and block (``CredentialToken``). A session compares the token
    /// it logged in with against this column (one primary-key read) before it acts on the
    /// login. `ALTER TABLE … ADD COLUMN` needs a constant default; every row gets its own
    /// token right after, and every insert writes one.
    private static let v3 = """
        ALTER TABLE users ADD COLUMN credential_token BLOB NOT NULL DEFAULT x'';
        """

    /// Key revocation and the owner instance of each key (`admin.revokeKey`, `admin.listKeys`),
    /// and the signed ledger checkpoints (SPEC §5.3), append-only like the ledger.
    private static let v4 = """
        ALTER TABLE signing_keys ADD COLUMN revoked_at REAL;
        ALTER TABLE signing_keys ADD COLUMN instance TEXT NOT NULL DEFAULT '';

        CREATE TABLE ledger_checkpoints (
            id INTEGER PRIMARY KEY,
            seq INTEGER NOT NULL CHECK (seq >= 0),
            entry_hash BLOB NOT NULL CHECK (length(entry_hash) = 32),
            kid TEXT NOT NULL,
            jws TEXT NOT NULL,
            created_at REAL NOT NULL
        ) STRICT;
        CREATE INDEX ledger_checkpoints_by_seq ON ledger_checkpoints(seq);
        CREATE TRIGGER ledger_checkpoints_no_update BEFORE UPDATE ON ledger_checkpoints
        BEGIN SELECT RAISE(ABORT, 'the ledger checkpoints are append-only'); END;
        CREATE TRIGGER ledger_checkpoints_no_delete BEFORE DELETE ON ledger_checkpoints
        BEGIN SELECT RAISE(ABORT, 'the ledger checkpoints are append-only'); END;
        """

    /// The message of the trigger that refuses checkpoints signed with a revoked key (the
    /// ledger's rows are checked once per batch since v18).
    static let revokedKeyMessage = "stepsign: the signing key is revoked"

    /// One active key per daemon instance, with the public half of each key (SPEC §5.2), and
    /// no ledger row or checkpoint signed with a revoked key (a signature made just before
    /// `admin.revokeKey` that reaches the ledger after it is refused, and its caller gets 15).
    private static let v5 = """
        ALTER TABLE signing_keys ADD COLUMN public_key TEXT;
        DROP INDEX signing_keys_one_active;
        CREATE UNIQUE INDEX signing_keys_one_active_per_instance ON signing_keys(instance) WHERE active = 1;
        CREATE TRIGGER ledger_key_not_revoked BEFORE INSERT ON ledger
        WHEN EXISTS (SELECT 1 FROM signing_keys WHERE kid = NEW.kid AND revoked_at IS NOT NULL)
        BEGIN SELECT RAISE(ABORT, '\(revokedKeyMessage)'); END;
        CREATE TRIGGER ledger_checkpoints_key_not_revoked BEFORE INSERT ON ledger_checkpoints
        WHEN EXISTS (SELECT 1 FROM signing_keys WHERE kid = NEW.kid AND revoked_at IS NOT NULL)
        BEGIN SELECT RAISE(ABORT, '\(revokedKeyMessage)'); END;
        """

    /// Endorsements of signing keys (SPEC §5.4): the JWS that chains a key to the cluster
    /// root, and the log index of a key's revocation event. Trust is decided by checking the
    /// JWS and the event, never by the columns being there.
    private static let v6 = """
        ALTER TABLE signing_keys ADD COLUMN endorsement TEXT;
        ALTER TABLE signing_keys ADD COLUMN revoked_index INTEGER CHECK (revoked_index >= 0);
        -- Events (SPEC §5.4) are ledger rows with auth_level -1: they authenticate no one.
        CREATE INDEX ledger_events ON ledger(seq) WHERE auth_level < 0;
        """

    /// Sealed credential records (SPEC §5.4): each user's seal, the log index and the digests
    /// it binds the record to, and each open activation code's seal. The records are sealed
    /// when the store is opened with its key (``SQLiteStore/prepareSeal(sealUnsealed:)``),
    /// not here: the key is not in the database.
    private static let v7 = """
        ALTER TABLE users ADD COLUMN event_index INTEGER NOT NULL DEFAULT -1;
        ALTER TABLE users ADD COLUMN history_digest BLOB;
        ALTER TABLE users ADD COLUMN device_keys_digest BLOB;
        ALTER TABLE users ADD COLUMN seal BLOB;
        ALTER TABLE activation_codes ADD COLUMN seal BLOB;
        -- A user's latest event, for the rollback check of every read of the user.
        CREATE INDEX ledger_user_events ON ledger(user_name, seq) WHERE auth_level < 0;
        """

    /// The ledger as a Merkle log (SPEC §5.5): the hash of every complete subtree (the leaves
    /// included; entry seq is leaf seq − 1) under its ``MerkleNode/storageIndex``, so an append
    /// only ever adds rows at the end of the table; written in the transaction that appends
    /// the entries; append-only like the ledger. A ledger made before gets its tree here, in the
    /// migration's transaction (``SQLiteStore/buildTree(_:)``).
    private static let v8 = """
        CREATE TABLE ledger_tree (
            id INTEGER PRIMARY KEY CHECK (id >= 0),
            hash BLOB NOT NULL CHECK (length(hash) = 32)
        ) STRICT;
        CREATE TRIGGER ledger_tree_no_update BEFORE UPDATE ON ledger_tree
        BEGIN SELECT RAISE(ABORT, 'the ledger tree is append-only'); END;
        CREATE TRIGGER ledger_tree_no_delete BEFORE DELETE ON ledger_tree
        BEGIN SELECT RAISE(ABORT, 'the ledger tree is append-only'); END;
        """

    /// The log's C2SP checkpoints (SPEC §5.5), one per size and signing instance, and its
    /// origin (one row, stored by the first daemon); both append-only.
    private static let v9 = """
        CREATE TABLE log_checkpoints (
            size INTEGER NOT NULL CHECK (size >= 0),
            instance TEXT NOT NULL,
            note TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (size, instance)
        ) STRICT;
        CREATE TRIGGER log_checkpoints_no_update BEFORE UPDATE ON log_checkpoints
        BEGIN SELECT RAISE(ABORT, 'log checkpoints are append-only'); END;
        CREATE TRIGGER log_checkpoints_no_delete BEFORE DELETE ON log_checkpoints
        BEGIN SELECT RAISE(ABORT, 'log checkpoints are append-only'); END;
        CREATE TABLE log_origin (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            origin TEXT NOT NULL CHECK (length(origin) > 0)
        ) STRICT;
        CREATE TRIGGER log_origin_no_update BEFORE UPDATE ON log_origin
        BEGIN SELECT RAISE(ABORT, 'the log origin is written once'); END;
        CREATE TRIGGER log_origin_no_delete BEFORE DELETE ON log_origin
        BEGIN SELECT RAISE(ABORT, 'the log origin is written once'); END;
        """

    /// Witnesses' cosignatures of the log's checkpoints (SPEC §5.6): one per size and witness,
    /// append-only.
    private static let v10 = """
        CREATE TABLE log_cosignatures (
            size INTEGER NOT NULL CHECK (size >= 0),
            witness TEXT NOT NULL,
            line TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (size, witness)
        ) STRICT;
        CREATE TRIGGER log_cosignatures_no_update BEFORE UPDATE ON log_cosignatures
        BEGIN SELECT RAISE(ABORT, 'log cosignatures are append-only'); END;
        CREATE TRIGGER log_cosignatures_no_delete BEFORE DELETE ON log_cosignatures
        BEGIN SELECT RAISE(ABORT, 'log cosignatures are append-only'); END;
        """

    /// Requests waiting for approval by several people, their approvals, and the user groups
    /// approver lists name (SPEC §3.4). Each request, approval and membership is sealed.
    private static let v11 = """
        CREATE TABLE approvals (
            id TEXT PRIMARY KEY,
            requester TEXT NOT NULL,
            payload TEXT NOT NULL,
            payload_length INTEGER NOT NULL,
            reason TEXT NOT NULL,
            auth_level INTEGER NOT NULL,
            auth_type INTEGER NOT NULL,
            authenticator_used TEXT NOT NULL,
            peer_uid INTEGER NOT NULL,
            peer_pid INTEGER NOT NULL,
            peer_comm TEXT NOT NULL,
            approvers TEXT NOT NULL,
            required INTEGER NOT NULL,
            approver_level INTEGER NOT NULL,
            approver_type INTEGER NOT NULL,
            rule_key TEXT NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            seal BLOB NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'signed', 'denied', 'expired')),
            signature_id TEXT,
            decided_by TEXT,
            decision_reason TEXT,
            decided_at REAL
        ) STRICT;
        CREATE INDEX approvals_pending ON approvals (state, expires_at);
        CREATE TABLE approval_votes (
            approval_id TEXT NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
            approver TEXT NOT NULL,
            auth_level INTEGER NOT NULL,
            authenticator TEXT NOT NULL,
            at REAL NOT NULL,
            seal BLOB NOT NULL,
            PRIMARY KEY (approval_id, approver)
        ) STRICT;
        CREATE TABLE group_members (
            group_name TEXT NOT NULL,
            user_name TEXT NOT NULL,
            added_seq INTEGER NOT NULL,
            seal BLOB NOT NULL,
            PRIMARY KEY (group_name, user_name)
        ) STRICT;
        """

    /// The log's epochs after its first (SPEC §5.5, `admin.recover`): append-only.
    private static let v12 = """
        CREATE TABLE log_epochs (
            epoch INTEGER PRIMARY KEY CHECK (epoch >= 2),
            origin TEXT NOT NULL UNIQUE CHECK (length(origin) > 0),
            first_index INTEGER NOT NULL CHECK (first_index >= 0),
            created_at REAL NOT NULL
        ) STRICT;
        CREATE TRIGGER log_epochs_no_update BEFORE UPDATE ON log_epochs
        BEGIN SELECT RAISE(ABORT, 'log epochs are append-only'); END;
        CREATE TRIGGER log_epochs_no_delete BEFORE DELETE ON log_epochs
        BEGIN SELECT RAISE(ABORT, 'log epochs are append-only'); END;
        """

    /// Attempts reserved by answers still being checked (SPEC §5.1): one row per reservation,
    /// under the keyed hash of the name (user or not) and with its expiry. The counter's
    /// `failed_attempts` counts them already; a row only says the attempt is still in flight,
    /// so an answer that would need it waits instead of being refused. A row whose expiry
    /// passed (its daemon died mid-check) counts as a failure; rows are removed when their
    /// answer settles, by a success or an unlock of the name, or a day after they expired.
    private static let v13 = """
        CREATE TABLE attempt_reservations (
            id BLOB NOT NULL PRIMARY KEY CHECK (length(id) = 16),
            name_key BLOB NOT NULL CHECK (length(name_key) = 32),
            expires_at REAL NOT NULL
        ) STRICT;
        CREATE INDEX attempt_reservations_by_name ON attempt_reservations(name_key, expires_at);
        CREATE INDEX attempt_reservations_by_expiry ON attempt_reservations(expires_at);
        """

    /// No lookalike users (SPEC §3): each user's ``UserIDForm/lookalikeKey(_:)``, filled for the
    /// users already there (lookalikes among them are kept and listed, not removed). And
    /// requests for approval whose state is sealed (SPEC §3.4), bound to their latest event
    /// in the log, which `approval_events` indexes.
    private static let v14 = """
        ALTER TABLE users ADD COLUMN name_key TEXT;
        CREATE INDEX users_by_name_key ON users (name_key);
        ALTER TABLE approvals ADD COLUMN event_index INTEGER;
        ALTER TABLE approvals ADD COLUMN state_seal BLOB;
        CREATE TABLE approval_events (
            approval_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (approval_id, seq)
        ) STRICT, WITHOUT ROWID;
        """

    /// The `idempotencyKey`s of signing requests (SPEC §3): one row per peer uid and key, with
    /// the request's parameter digest, its reserved signature IDs (space-separated), whether
    /// it is done, how long a pending claim blocks the key and when the row is forgotten.
    private static let v15 = """
        CREATE TABLE idempotency_keys (
            peer_uid INTEGER NOT NULL,
            key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 64),
            digest BLOB NOT NULL CHECK (length(digest) = 32),
            signature_ids TEXT NOT NULL,
            done INTEGER NOT NULL CHECK (done IN (0, 1)),
            pending_until REAL NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (peer_uid, key)
        ) STRICT;
        CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys(expires_at);
        """

    /// FIDO2 security keys as device keys (SPEC §5.7): a device key that is one has its
    /// credential ID (base64url) and the signature counter of its last accepted assertion;
    /// both are NULL for a plain device key.
    private static let v16 = """
        ALTER TABLE device_keys ADD COLUMN fido2_credential_id TEXT;
        ALTER TABLE device_keys ADD COLUMN fido2_sign_count INTEGER;
        """

    /// Witnesses' cosignatures keyed by size, witness and line (SPEC §5.5–§5.6): a row written
    /// for (size, witness) behind the daemon's back no longer keeps the witness's genuine line
    /// out. SQLite cannot change a primary key, so the table is rebuilt (a new table, the rows
    /// copied, the old one dropped, the new one renamed) and its append-only triggers made
    /// again; the migration's transaction makes it one step.
    private static let v17 = """
        CREATE TABLE log_cosignatures_v17 (
            size INTEGER NOT NULL CHECK (size >= 0),
            witness TEXT NOT NULL,
            line TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (size, witness, line)
        ) STRICT;
        INSERT INTO log_cosignatures_v17 (size, witness, line, created_at)
            SELECT size, witness, line, created_at FROM log_cosignatures;
        DROP TABLE log_cosignatures;
        ALTER TABLE log_cosignatures_v17 RENAME TO log_cosignatures;
        CREATE TRIGGER log_cosignatures_no_update BEFORE UPDATE ON log_cosignatures
        BEGIN SELECT RAISE(ABORT, 'log cosignatures are append-only'); END;
        CREATE TRIGGER log_cosignatures_no_delete BEFORE DELETE ON log_cosignatures
        BEGIN SELECT RAISE(ABORT, 'log cosignatures are append-only'); END;
        """

    /// A ledger row signed with a revoked key is refused by the log core's commit, which checks
    /// each of its batch's kids once, in the same immediate transaction as the inserts
    /// (`SQLiteStore.commitBlocking`): a trigger run for every row cost 2.5 µs of the ledger
    /// thread per signature (issue 43). The guarantee is the same: a key revoked before the
    /// batch's transaction began refuses the whole batch, and none can be revoked during it.
    /// The checkpoints keep their trigger (one row per batch at most).
    private static let v18 = """
        DROP TRIGGER ledger_key_not_revoked;
        """
}
