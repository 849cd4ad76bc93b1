import Foundation

/// The PostgreSQL schema, as numbered migrations (SPEC §5.2).
///
/// ``PostgresStore/open(_:logger:)`` applies the missing ones in one transaction under a
/// transaction-scoped advisory lock, so that daemons starting together on an empty database
/// make one schema; a database whose version is above ``latestVersion`` is refused. A
/// migration that has shipped is never edited; later changes add one at the end.
///
/// Types: `timestamptz` for times, `bytea` for hashes, keys and tokens, `bigint` for sequence
/// numbers, `iat` and uids, `boolean` for flags. Tables live in the connection's default
/// schema (`public` unless the role's `search_path` says otherwise).
enum PostgresSchema {
    struct Migration {
        let version: Int
        let name: String
        let statements: [String]
    }

    /// The table recording applied migrations.
    static let versionTable = "stepsign_schema_migrations"

    /// `pg_advisory_xact_lock` key of the migrations ("stepschm").
    static let migrationLockKey: Int64 = 0x7374_6570_7363_686D
    /// `pg_advisory_xact_lock` key under which a batch takes the ledger's tail ("stepledg").
    static let ledgerLockKey: Int64 = 0x7374_6570_6C65_6467
    /// `pg_advisory_xact_lock` key that serializes signing-key changes ("stepkeys").
    static let signingKeysLockKey: Int64 = 0x7374_6570_6B65_7973
    /// The advisory key of the log's turn ("stepturn", schema v18): every ledger insert takes it
    /// shared for its transaction; a batch that lost the race for the tail twice takes it
    /// exclusive for its session until it commits (``PostgresLedgerTurns``).
    static let ledgerTurnKey: Int64 = 0x7374_6570_7475_726E

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    static let migrations: [Migration] = [
        Migration(version: 1, name: "v1-schema", statements: v1),
        Migration(version: 2, name: "v2-signing-keys-per-instance", statements: v2),
        Migration(version: 3, name: "v3-ledger-rules-per-statement", statements: v3),
        Migration(version: 4, name: "v4-ledger-append-commit", statements: v4),
        Migration(version: 5, name: "v5-key-endorsements", statements: v5),
        Migration(version: 6, name: "v6-sealed-credentials", statements: v6),
        Migration(version: 7, name: "v7-revoked-key-detail", statements: v7),
        Migration(version: 8, name: "v8-merkle-tree", statements: v8),
        Migration(version: 9, name: "v9-log-checkpoints", statements: v9),
        Migration(version: 10, name: "v10-log-cosignatures", statements: v10),
        Migration(version: 11, name: "v11-approvals-and-groups", statements: v11),
        Migration(version: 12, name: "v12-log-epochs", statements: v12),
        Migration(version: 13, name: "v13-attempt-reservations", statements: v13),
        Migration(version: 14, name: "v14-name-keys-and-approval-state", statements: v14),
        Migration(version: 15, name: "v15-idempotency-keys", statements: v15),
        Migration(version: 16, name: "v16-fido2-credentials", statements: v16),
        Migration(version: 17, name: "v17-log-core-compare-and-swap", statements: v17),
        Migration(version: 18, name: "v18-log-turn", statements: v18),
        Migration(version: 19, name: "v19-log-cosignatures-by-line", statements: v19),
        Migration(version: 20, name: "v20-no-hashing-in-the-database", statements: v20),
    ]

    /// The SQLSTATE the triggers raise for a row signed with a revoked key.
    static let revokedKeySQLState = SQLState.revokedSigningKey

    /// `stepsign_ledger_append`'s parameters and result, the same in v2 and v3 (`CREATE OR
    /// REPLACE` keeps the signature), after `CREATE … FUNCTION stepsign_ledger_append(`.
    private static let ledgerAppendParameters = """
        signature_ids text[], user_names text[], iats bigint[], kids text[], jwss text[],
        peer_uids bigint[], peer_pids integer[], peer_comms text[], auth_levels integer[],
        created timestamptz
    ) RETURNS TABLE (tail_seq bigint, tail_hash bytea, last_hash bytea)
    LANGUAGE plpgsql VOLATILE AS $$
    """

    /// The append's first steps in v2 and v3: the ledger lock, then the tail read under it.
    private static let ledgerAppendTailRead = """
        PERFORM pg_advisory_xact_lock(\(ledgerLockKey));
        SELECT l.seq, l.entry_hash INTO tail_seq, tail_hash FROM ledger l ORDER BY l.seq DESC LIMIT 1;
        IF NOT FOUND THEN
            tail_seq := 0;
            tail_hash := decode(repeat('00', 32), 'hex');
        END IF;
        previous := tail_hash;
    """

    /// The schema of SQLite's v1…v4 in one step (nothing to upgrade from on PostgreSQL). The
    /// runner stores a random `name_key` in `store_secrets` with it.
    private static let v1: [String] = [
        """
        CREATE TABLE stepsign_schema_migrations (
            version integer PRIMARY KEY,
            name text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        """
        CREATE TABLE users (
            name text PRIMARY KEY,
            password_hash text NOT NULL,
            password_changed_at timestamptz NOT NULL,
            password_expired boolean NOT NULL DEFAULT false,
            must_change_password boolean NOT NULL DEFAULT false,
            failed_attempts integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
            blocked boolean NOT NULL DEFAULT false,
            blocked_until timestamptz,
            created_at timestamptz NOT NULL,
            credential_token bytea NOT NULL
        )
        """,
        """
        CREATE TABLE password_history (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_name text NOT NULL REFERENCES users(name) ON DELETE CASCADE,
            hash text NOT NULL,
            set_at timestamptz NOT NULL
        )
        """,
        "CREATE INDEX password_history_by_user ON password_history(user_name, id)",
        """
        CREATE TABLE device_keys (
            kid text PRIMARY KEY,
            id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            user_name text NOT NULL REFERENCES users(name) ON DELETE CASCADE,
            public_key_jwk text NOT NULL,
            label text NOT NULL,
            created_at timestamptz NOT NULL,
            revoked_at timestamptz
        )
        """,
        "CREATE INDEX device_keys_by_user ON device_keys(user_name)",
        """
        CREATE TABLE activation_codes (
            user_name text PRIMARY KEY REFERENCES users(name) ON DELETE CASCADE,
            code_hash text NOT NULL,
            verification_key text NOT NULL,
            expires_at timestamptz NOT NULL,
            failed_attempts integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0)
        )
        """,
        """
        CREATE TABLE signing_keys (
            kid text PRIMARY KEY,
            id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            created_at timestamptz NOT NULL,
            active boolean NOT NULL DEFAULT false,
            revoked_at timestamptz,
            instance text NOT NULL DEFAULT ''
        )
        """,
        "CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys(active) WHERE active",
        """
        CREATE TABLE store_secrets (
            name text PRIMARY KEY,
            value bytea NOT NULL
        )
        """,
        """
        CREATE TABLE name_counters (
            name_key bytea PRIMARY KEY CHECK (length(name_key) = 32),
            failed_attempts integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
            blocked boolean NOT NULL DEFAULT false,
            blocked_until timestamptz,
            updated_at timestamptz NOT NULL
        )
        """,
        "CREATE INDEX name_counters_by_age ON name_counters(updated_at)",
        """
        CREATE TABLE activation_budgets (
            name_key bytea PRIMARY KEY CHECK (length(name_key) = 32),
            window_start timestamptz NOT NULL,
            codes_issued integer NOT NULL DEFAULT 0 CHECK (codes_issued >= 0),
            failed_attempts integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0)
        )
        """,
        "CREATE INDEX activation_budgets_by_age ON activation_budgets(window_start)",
        """
        CREATE TABLE used_once (
            value text PRIMARY KEY,
            expires_at timestamptz NOT NULL
        )
        """,
        "CREATE INDEX used_once_by_expiry ON used_once(expires_at)",
        // No foreign key to users: the ledger outlives removed users.
        """
        CREATE TABLE ledger (
            seq bigint PRIMARY KEY CHECK (seq >= 1),
            signature_id text NOT NULL UNIQUE,
            user_name text NOT NULL,
            iat bigint NOT NULL,
            kid text NOT NULL,
            jws text NOT NULL,
            prev_hash bytea NOT NULL CHECK (length(prev_hash) = 32),
            entry_hash bytea NOT NULL CHECK (length(entry_hash) = 32),
            peer_uid bigint NOT NULL,
            peer_pid integer NOT NULL,
            peer_comm text NOT NULL,
            auth_level integer NOT NULL,
            created_at timestamptz NOT NULL
        )
        """,
        """
        CREATE TABLE ledger_checkpoints (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            seq bigint NOT NULL CHECK (seq >= 0),
            entry_hash bytea NOT NULL CHECK (length(entry_hash) = 32),
            kid text NOT NULL,
            jws text NOT NULL,
            created_at timestamptz NOT NULL
        )
        """,
        "CREATE INDEX ledger_checkpoints_by_seq ON ledger_checkpoints(seq)",
        // Append-only in the database: no role, the owner included, may change or remove a
        // row while these triggers stand (the least-privilege role of docs/sql/roles.sql
        // cannot drop them either).
        """
        CREATE FUNCTION stepsign_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'the % table is append-only', TG_TABLE_NAME
                USING ERRCODE = 'restrict_violation';
        END
        $$
        """,
        """
        CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
        FOR EACH ROW EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER ledger_checkpoints_append_only BEFORE UPDATE OR DELETE ON ledger_checkpoints
        FOR EACH ROW EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER ledger_checkpoints_no_truncate BEFORE TRUNCATE ON ledger_checkpoints
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_append_only()
        """,
        // One chain, kept by the database too: a row must follow the last one (seq - 1
        // exists, or seq is 1), carry that row's hash as prev_hash, and hash to entry_hash
        // = SHA-256(prev_hash || SHA-256(jws)). A fork, a gap or a bad hash is refused
        // whoever inserts it.
        """
        CREATE FUNCTION stepsign_ledger_chain() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            previous bytea;
        BEGIN
            IF NEW.seq = 1 THEN
                previous := decode(repeat('00', 32), 'hex');
            ELSE
                SELECT entry_hash INTO previous FROM ledger WHERE seq = NEW.seq - 1;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'ledger entry % does not follow an entry %', NEW.seq, NEW.seq - 1
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
            END IF;
            IF NEW.prev_hash IS DISTINCT FROM previous THEN
                RAISE EXCEPTION 'ledger entry % does not chain to entry %', NEW.seq, NEW.seq - 1
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF NEW.entry_hash IS DISTINCT FROM sha256(NEW.prev_hash || sha256(convert_to(NEW.jws, 'UTF8'))) THEN
                RAISE EXCEPTION 'ledger entry % has a wrong entry_hash', NEW.seq
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END
        $$
        """,
        """
        CREATE TRIGGER ledger_chain BEFORE INSERT ON ledger
        FOR EACH ROW EXECUTE FUNCTION stepsign_ledger_chain()
        """,
    ]

    /// One active key per daemon instance, with the public half of each key so that every
    /// daemon publishes and checks the others' (SPEC §5.2); no ledger row or checkpoint signed
    /// with a revoked key, whichever daemon revoked it (the daemon that holds the key then
    /// gets ``revokedKeySQLState``, rotates, and its caller gets 15).
    private static let v2: [String] = [
        "ALTER TABLE signing_keys ADD COLUMN public_key text",
        "DROP INDEX signing_keys_one_active",
        "CREATE UNIQUE INDEX signing_keys_one_active_per_instance ON signing_keys(instance) WHERE active",
        keyNotRevokedFunction(create: "CREATE FUNCTION", detail: false),
        """
        CREATE TRIGGER ledger_key_not_revoked BEFORE INSERT ON ledger
        FOR EACH ROW EXECUTE FUNCTION stepsign_signing_key_not_revoked()
        """,
        """
        CREATE TRIGGER ledger_checkpoints_key_not_revoked BEFORE INSERT ON ledger_checkpoints
        FOR EACH ROW EXECUTE FUNCTION stepsign_signing_key_not_revoked()
        """,
        // A batch in one statement (SPEC §5.2 "one database-side lock per batch"): the ledger
        // lock, the tail read under it (a VOLATILE function's statements see what committed
        // before the lock was granted), the rows numbered and chained, inserted. The daemon
        // calls it inside its batch transaction and COMMITs after (adding the checkpoints it
        // signs), so the lock is held for two round trips instead of four. Returns the tail it
        // extended, so the daemon computes the same entries (and checks the last hash).
        """
        CREATE FUNCTION stepsign_ledger_append(
        \(ledgerAppendParameters)
        DECLARE
            previous bytea;
            next_hash bytea;
            n integer := coalesce(array_length(jwss, 1), 0);
        BEGIN
        \(ledgerAppendTailRead)
            FOR i IN 1..n LOOP
                next_hash := sha256(previous || sha256(convert_to(jwss[i], 'UTF8')));
                INSERT INTO ledger (seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                                    peer_uid, peer_pid, peer_comm, auth_level, created_at)
                VALUES (tail_seq + i, signature_ids[i], user_names[i], iats[i], kids[i], jwss[i], previous, next_hash,
                        peer_uids[i], peer_pids[i], peer_comms[i], auth_levels[i], created);
                previous := next_hash;
            END LOOP;
            last_hash := previous;
            RETURN NEXT;
        END
        $$
        """,
    ]

    /// The ledger's rules checked once per statement, and a batch inserted by one statement
    /// (issue 14's bench: the per-row triggers and the per-row INSERTs of v1/v2 cost the server
    /// about 60 µs of CPU per entry, all of it under the ledger lock). The rules are v1's chain
    /// and v2's revoked keys, unchanged: every row of an INSERT must follow entry seq − 1 (in
    /// the ledger or in the same statement; the genesis hash for seq 1), carry its hash as
    /// prev_hash and hash to entry_hash = SHA-256(prev_hash || SHA-256(jws)), and no row may be
    /// signed with a revoked key. An AFTER … FOR EACH STATEMENT trigger sees the statement's
    /// rows (its transition table) and the ledger with them, and refuses the whole statement.
    private static let v3: [String] = [
        ledgerRulesFunction(create: "CREATE FUNCTION", detail: false),
        """
        CREATE TRIGGER ledger_rules AFTER INSERT ON ledger
        REFERENCING NEW TABLE AS stepsign_new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_ledger_rules()
        """,
        "DROP TRIGGER ledger_chain ON ledger",
        "DROP TRIGGER ledger_key_not_revoked ON ledger",
        "DROP FUNCTION stepsign_ledger_chain()",
        // v2's batch, its rows chained first and then inserted by one INSERT … SELECT.
        ledgerAppendV3,
    ]

    /// v3's `stepsign_ledger_append`: v2's batch, its rows chained first and then inserted by
    /// one INSERT … SELECT (v8 adds the tree to it, as shipped).
    static let ledgerAppendV3 = """
        CREATE OR REPLACE FUNCTION stepsign_ledger_append(
        \(ledgerAppendParameters)
        DECLARE
            previous bytea;
            prevs bytea[] := '{}';
            hashes bytea[] := '{}';
            n integer := coalesce(array_length(jwss, 1), 0);
        BEGIN
        \(ledgerAppendTailRead)
            FOR i IN 1..n LOOP
                prevs := array_append(prevs, previous);
                previous := sha256(previous || sha256(convert_to(jwss[i], 'UTF8')));
                hashes := array_append(hashes, previous);
            END LOOP;
            INSERT INTO ledger (seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                                peer_uid, peer_pid, peer_comm, auth_level, created_at)
            SELECT tail_seq + r.i, r.signature_id, r.user_name, r.iat, r.kid, r.jws, r.prev_hash, r.entry_hash,
                   r.peer_uid, r.peer_pid, r.peer_comm, r.auth_level, created
              FROM unnest(signature_ids, user_names, iats, kids, jwss, prevs, hashes,
                          peer_uids, peer_pids, peer_comms, auth_levels)
                   WITH ORDINALITY AS r(signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                                        peer_uid, peer_pid, peer_comm, auth_level, i)
             ORDER BY r.i;
            last_hash := previous;
            RETURN NEXT;
        END
        $$
        """

    /// A batch appended and committed by one statement: `CALL stepsign_ledger_append_commit`
    /// takes the ledger lock, reads the tail, appends the rows through
    /// `stepsign_ledger_append` (the rules trigger unchanged) and COMMITs inside the call, so
    /// the lock is held only while the server works (no round trip to the daemon under it)
    /// and the call's answer comes after the commit is durable. When an entry-count checkpoint
    /// (`checkpoint_every`) falls in the batch it appends nothing, rolls back (the lock goes
    /// with it) and answers with a NULL `last_hash`: the daemon then commits that batch in a
    /// transaction of its own, with its checkpoint. A procedure may COMMIT only when called
    /// outside a transaction block, which is how the daemon calls it.
    private static let v4: [String] = [
        """
        CREATE PROCEDURE stepsign_ledger_append_commit(
            signature_ids text[], user_names text[], iats bigint[], kids text[], jwss text[],
            peer_uids bigint[], peer_pids integer[], peer_comms text[], auth_levels integer[],
            created timestamptz, checkpoint_every bigint,
            INOUT tail_seq bigint, INOUT tail_hash bytea, INOUT last_hash bytea
        ) LANGUAGE plpgsql AS $$
        DECLARE
            n bigint := coalesce(array_length(jwss, 1), 0);
            head bigint;
        BEGIN
            PERFORM pg_advisory_xact_lock(\(ledgerLockKey));
            SELECT coalesce(max(l.seq), 0) INTO head FROM ledger l;
            IF checkpoint_every > 0 AND (head + n) / checkpoint_every > head / checkpoint_every THEN
                ROLLBACK;
                tail_seq := head;
                tail_hash := NULL;
                last_hash := NULL;
                RETURN;
            END IF;
            SELECT a.tail_seq, a.tail_hash, a.last_hash INTO tail_seq, tail_hash, last_hash
              FROM stepsign_ledger_append(signature_ids, user_names, iats, kids, jwss, peer_uids, peer_pids,
                                          peer_comms, auth_levels, created) a;
            COMMIT;
        END
        $$
        """,
    ]

    /// Endorsements of signing keys (SPEC §5.4): the JWS that chains a key to the cluster
    /// root, and the log index of a key's revocation event. Every daemon checks the chain and
    /// the event itself; the columns alone prove nothing.
    private static let v5: [String] = [
        "ALTER TABLE signing_keys ADD COLUMN endorsement text",
        "ALTER TABLE signing_keys ADD COLUMN revoked_index bigint CHECK (revoked_index >= 0)",
        // Events (SPEC §5.4) are ledger rows with auth_level -1: they authenticate no one.
        "CREATE INDEX ledger_events ON ledger (seq) WHERE auth_level < 0",
    ]

    /// Sealed credential records (SPEC §5.4), as SQLite's v7: each user's seal with the log
    /// index and digests it binds the record to, each open activation code's seal, and an
    /// index for a user's latest event. The records are sealed by the migrator in the same
    /// transaction, with the key from the daemon's configuration (never in the database).
    private static let v6: [String] = [
        "ALTER TABLE users ADD COLUMN event_index bigint NOT NULL DEFAULT -1",
        "ALTER TABLE users ADD COLUMN history_digest bytea",
        "ALTER TABLE users ADD COLUMN device_keys_digest bytea",
        "ALTER TABLE users ADD COLUMN seal bytea",
        "ALTER TABLE activation_codes ADD COLUMN seal bytea",
        "CREATE INDEX ledger_user_events ON ledger (user_name, seq) WHERE auth_level < 0",
    ]

    /// The function of the trigger that refuses a checkpoint signed with a revoked key (v2),
    /// `detail`: the key's id in the error's detail (v7), where the store reads it.
    private static func keyNotRevokedFunction(create: String, detail: Bool) -> String {
        """
        \(create) stepsign_signing_key_not_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM signing_keys WHERE kid = NEW.kid AND revoked_at IS NOT NULL) THEN
                RAISE EXCEPTION 'signing key % is revoked', NEW.kid USING ERRCODE = '\(revokedKeySQLState)'\(detail ? ", DETAIL = NEW.kid" : "");
            END IF;
            RETURN NEW;
        END
        $$
        """
    }

    /// The function of the ledger's statement trigger (v3): every new row chains, and none is
    /// signed with a revoked key (`detail`: the key's id in the error's detail, v7).
    private static func ledgerRulesFunction(create: String, detail: Bool) -> String {
        """
        \(create) stepsign_ledger_rules() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            bad record;
            revoked text;
        BEGIN
            -- The entry before each row by its primary key, one index lookup per row: a join
            -- would be planned without statistics on the transition table, and a hash join
            -- reads the whole ledger.
            SELECT n.seq,
                   CASE WHEN n.expected IS NULL THEN 'does not follow an entry ' || (n.seq - 1)
                        WHEN n.prev_hash IS DISTINCT FROM n.expected THEN 'does not chain to entry ' || (n.seq - 1)
                        ELSE 'has a wrong entry_hash' END AS problem
              INTO bad
              FROM (SELECT r.seq, r.prev_hash, r.entry_hash, r.jws,
                           CASE WHEN r.seq = 1 THEN decode(repeat('00', 32), 'hex')
                                ELSE (SELECT p.entry_hash FROM ledger p WHERE p.seq = r.seq - 1) END AS expected
                      FROM stepsign_new_rows r) AS n
             WHERE n.expected IS NULL
                OR n.prev_hash IS DISTINCT FROM n.expected
                OR n.entry_hash IS DISTINCT FROM sha256(n.prev_hash || sha256(convert_to(n.jws, 'UTF8')))
             ORDER BY n.seq
             LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'ledger entry % %', bad.seq, bad.problem USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            SELECT n.kid INTO revoked
              FROM stepsign_new_rows n
             WHERE EXISTS (SELECT 1 FROM signing_keys k WHERE k.kid = n.kid AND k.revoked_at IS NOT NULL)
             LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'signing key % is revoked', revoked USING ERRCODE = '\(revokedKeySQLState)'\(detail ? ", DETAIL = revoked" : "");
            END IF;
            RETURN NULL;
        END
        $$
        """
    }

    /// A refused key's id as a structured field (issue 23): the error's DETAIL, not a word of
    /// its message.
    private static let v7: [String] = [
        keyNotRevokedFunction(create: "CREATE OR REPLACE FUNCTION", detail: true),
        ledgerRulesFunction(create: "CREATE OR REPLACE FUNCTION", detail: true),
    ]

    /// The ledger as a Merkle log (SPEC §5.5), as SQLite's v8: the hash of every complete
    /// subtree (the leaves included; entry seq is leaf seq − 1) under its storage index,
    /// append-only, extended by
    /// `stepsign_tree_append` inside `stepsign_ledger_append`, so under the ledger lock and in
    /// the batch's own transaction on both of the store's paths (one `CALL`, or a transaction
    /// with a checkpoint): two daemons extend one tree. The entries already there get their tree
    /// in this migration's transaction, 10,000 at a time.
    private static let v8: [String] = [
        """
        CREATE TABLE ledger_tree (
            id bigint PRIMARY KEY CHECK (id >= 0),
            hash bytea NOT NULL CHECK (length(hash) = 32)
        )
        """,
        // MerkleNode.storageIndex (Go's sumdb/tlog StoredHashIndex): an append's nodes come
        // right after the previous append's, so the primary key only grows at its end.
        """
        CREATE FUNCTION stepsign_tree_index(level integer, n bigint) RETURNS bigint
        LANGUAGE plpgsql IMMUTABLE STRICT AS $$
        DECLARE
            m bigint := n;
            sum bigint := 0;
        BEGIN
            FOR l IN 1..level LOOP
                m := 2 * m + 1;
            END LOOP;
            WHILE m > 0 LOOP
                sum := sum + m;
                m := m >> 1;
            END LOOP;
            RETURN sum + level;
        END
        $$
        """,
        """
        CREATE TRIGGER ledger_tree_append_only BEFORE UPDATE OR DELETE ON ledger_tree
        FOR EACH ROW EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER ledger_tree_no_truncate BEFORE TRUNCATE ON ledger_tree
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_append_only()
        """,
        // Extends the tree of `tail_size` leaves by the leaves of `jwss`: reads its right edge
        // (the complete subtrees of tail_size's binary decomposition, O(log n) lookups), then
        // per leaf its hash and the subtrees it completes, kept on a stack, inserted at once.
        """
        CREATE FUNCTION stepsign_tree_append(tail_size bigint, jwss text[]) RETURNS void
        LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
            edge_levels integer[] := '{}';
            edge_hashes bytea[] := '{}';
            top integer := 0;
            new_hashes bytea[] := '{}';
            count integer := 0;
            start bigint := 0;
            stored bytea;
            node_level integer;
            h bytea;
            n integer := coalesce(array_length(jwss, 1), 0);
        BEGIN
            FOR lvl IN REVERSE 62..0 LOOP
                IF (tail_size >> lvl) & 1 = 1 THEN
                    SELECT t.hash INTO stored FROM ledger_tree t WHERE t.id = stepsign_tree_index(lvl, start >> lvl);
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'the ledger tree lacks the hash of the subtree (%, %)', lvl, start >> lvl
                            USING ERRCODE = 'data_corrupted';
                    END IF;
                    top := top + 1;
                    edge_levels[top] := lvl;
                    edge_hashes[top] := stored;
                    start := start + (1::bigint << lvl);
                END IF;
            END LOOP;
            IF EXISTS (SELECT 1 FROM ledger_tree t WHERE t.id = stepsign_tree_index(0, tail_size)) THEN
                RAISE EXCEPTION 'the tree has leaves past the ledger''s last entry %: entries were removed', tail_size
                    USING ERRCODE = 'data_corrupted';
            END IF;
            -- The new nodes in append order, which is their storage order: their ids run on from
            -- the first leaf's, one by one (no index computed per node).
            FOR i IN 1..n LOOP
                node_level := 0;
                h := sha256('\\x00'::bytea || convert_to(jwss[i], 'UTF8'));
                count := count + 1;
                new_hashes[count] := h;
                WHILE top > 0 AND edge_levels[top] = node_level LOOP
                    h := sha256('\\x01'::bytea || edge_hashes[top] || h);
                    top := top - 1;
                    node_level := node_level + 1;
                    count := count + 1;
                    new_hashes[count] := h;
                END LOOP;
                top := top + 1;
                edge_levels[top] := node_level;
                edge_hashes[top] := h;
            END LOOP;
            INSERT INTO ledger_tree (id, hash)
            SELECT stepsign_tree_index(0, tail_size) + u.i - 1, u.hash
              FROM unnest(new_hashes) WITH ORDINALITY AS u(hash, i);
        END
        $$
        """,
        ledgerAppendV3.replacingOccurrences(
            of: "    last_hash := previous;",
            with: "    PERFORM stepsign_tree_append(tail_seq, jwss);\n    last_hash := previous;"),
        """
        DO $$
        DECLARE
            size bigint := 0;
            batch text[];
        BEGIN
            IF (SELECT coalesce(max(seq), 0) FROM ledger) <> (SELECT count(*) FROM ledger) THEN
                RAISE EXCEPTION 'the ledger has a gap: no tree can be made of it' USING ERRCODE = 'data_corrupted';
            END IF;
            LOOP
                SELECT array_agg(l.jws ORDER BY l.seq) INTO batch
                  FROM (SELECT seq, jws FROM ledger WHERE seq > size ORDER BY seq LIMIT 10000) AS l;
                EXIT WHEN batch IS NULL;
                PERFORM stepsign_tree_append(size, batch);
                size := size + array_length(batch, 1);
            END LOOP;
        END
        $$
        """,
    ]

    /// The log's C2SP checkpoints (SPEC §5.5), one per size and signing instance (each daemon
    /// signs its own), and the log's origin: one row, stored by the first daemon, never changed.
    private static let v9: [String] = [
        """
        CREATE TABLE log_checkpoints (
            size bigint NOT NULL CHECK (size >= 0),
            instance text NOT NULL,
            note text NOT NULL,
            created_at timestamptz NOT NULL,
            PRIMARY KEY (size, instance)
        )
        """,
        """
        CREATE TRIGGER log_checkpoints_append_only BEFORE UPDATE OR DELETE ON log_checkpoints
        FOR EACH ROW EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER log_checkpoints_no_truncate BEFORE TRUNCATE ON log_checkpoints
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TABLE log_origin (
            id integer PRIMARY KEY CHECK (id = 1),
            origin text NOT NULL CHECK (length(origin) > 0)
        )
        """,
        """
        CREATE TRIGGER log_origin_written_once BEFORE UPDATE OR DELETE ON log_origin
        FOR EACH ROW EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER log_origin_no_truncate BEFORE TRUNCATE ON log_origin
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_append_only()
        """,
    ]

    /// Witnesses' cosignatures of the log's checkpoints (SPEC §5.6): one per size and witness,
    /// append-only.
    private static let v10: [String] = [
        """
        CREATE TABLE log_cosignatures (
            size bigint NOT NULL CHECK (size >= 0),
            witness text NOT NULL,
            line text NOT NULL,
            created_at timestamptz NOT NULL,
            PRIMARY KEY (size, witness)
        )
        """,
        """
        CREATE TRIGGER log_cosignatures_append_only BEFORE UPDATE OR DELETE ON log_cosignatures
        FOR EACH ROW EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER log_cosignatures_no_truncate BEFORE TRUNCATE ON log_cosignatures
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_append_only()
        """,
    ]

    /// Requests waiting for approval by several people, their approvals, and the user groups
    /// approver lists name (SPEC §3.4). Each request, approval and membership is sealed.
    private static let v11: [String] = [
        """
        CREATE TABLE approvals (
            id text PRIMARY KEY,
            requester text NOT NULL,
            payload text NOT NULL,
            payload_length integer NOT NULL,
            reason text NOT NULL,
            auth_level integer NOT NULL,
            auth_type integer NOT NULL,
            authenticator_used text NOT NULL,
            peer_uid bigint NOT NULL,
            peer_pid integer NOT NULL,
            peer_comm text NOT NULL,
            approvers text NOT NULL,
            required integer NOT NULL,
            approver_level integer NOT NULL,
            approver_type integer NOT NULL,
            rule_key text NOT NULL,
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            seal bytea NOT NULL,
            state text NOT NULL CHECK (state IN ('pending', 'approved', 'signed', 'denied', 'expired')),
            signature_id text,
            decided_by text,
            decision_reason text,
            decided_at timestamptz
        )
        """,
        "CREATE INDEX approvals_pending ON approvals (state, expires_at)",
        """
        CREATE TABLE approval_votes (
            approval_id text NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
            approver text NOT NULL,
            auth_level integer NOT NULL,
            authenticator text NOT NULL,
            at timestamptz NOT NULL,
            seal bytea NOT NULL,
            PRIMARY KEY (approval_id, approver)
        )
        """,
        """
        CREATE TABLE group_members (
            group_name text NOT NULL,
            user_name text NOT NULL,
            added_seq bigint NOT NULL,
            seal bytea NOT NULL,
            PRIMARY KEY (group_name, user_name)
        )
        """,
    ]

    /// The log's epochs after its first (SPEC §5.5, `admin.recover`): append-only.
    private static let v12: [String] = [
        """
        CREATE TABLE log_epochs (
            epoch bigint PRIMARY KEY CHECK (epoch >= 2),
            origin text NOT NULL UNIQUE CHECK (length(origin) > 0),
            first_index bigint NOT NULL CHECK (first_index >= 0),
            created_at timestamptz NOT NULL
        )
        """,
        """
        CREATE TRIGGER log_epochs_append_only BEFORE UPDATE OR DELETE ON log_epochs
        FOR EACH ROW EXECUTE FUNCTION stepsign_append_only()
        """,
        """
        CREATE TRIGGER log_epochs_no_truncate BEFORE TRUNCATE ON log_epochs
        FOR EACH STATEMENT EXECUTE FUNCTION stepsign_append_only()
        """,
    ]

    /// Attempts reserved by answers still being checked, on any daemon (SPEC §5.1), as in
    /// SQLite's v13: one row per reservation under the name's keyed hash, with its expiry.
    /// Changed only under the lock of the name's counter row (the user's, or its
    /// `name_counters` row).
    private static let v13: [String] = [
        """
        CREATE TABLE attempt_reservations (
            id bytea PRIMARY KEY CHECK (length(id) = 16),
            name_key bytea NOT NULL CHECK (length(name_key) = 32),
            expires_at timestamptz NOT NULL
        )
        """,
        "CREATE INDEX attempt_reservations_by_name ON attempt_reservations(name_key, expires_at)",
        "CREATE INDEX attempt_reservations_by_expiry ON attempt_reservations(expires_at)",
    ]

    /// No lookalike users (SPEC §3): each user's lookalike key (filled for the users already
    /// there by the migrator, ``PostgresStore/fillNameKeys(_:logger:)``). And requests for approval
    /// whose state is sealed (SPEC §3.4), bound to their latest event in the log, which
    /// `approval_events` indexes (filled by the migrator from the events already there).
    private static let v14: [String] = [
        "ALTER TABLE users ADD COLUMN name_key text",
        "CREATE INDEX users_by_name_key ON users (name_key)",
        "ALTER TABLE approvals ADD COLUMN event_index bigint",
        "ALTER TABLE approvals ADD COLUMN state_seal bytea",
        """
        CREATE TABLE approval_events (
            approval_id text NOT NULL,
            seq bigint NOT NULL,
            PRIMARY KEY (approval_id, seq)
        )
        """,
    ]

    /// The `idempotencyKey`s of signing requests (SPEC §3), as SQLite's v15.
    private static let v15: [String] = [
        """
        CREATE TABLE idempotency_keys (
            peer_uid bigint NOT NULL,
            key text NOT NULL CHECK (length(key) BETWEEN 1 AND 64),
            digest bytea NOT NULL CHECK (length(digest) = 32),
            signature_ids text[] NOT NULL,
            done boolean NOT NULL,
            pending_until timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (peer_uid, key)
        )
        """,
        "CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys(expires_at)",
    ]

    /// FIDO2 security keys as device keys (SPEC §5.7), as SQLite's v16.
    private static let v16: [String] = [
        "ALTER TABLE device_keys ADD COLUMN fido2_credential_id text",
        "ALTER TABLE device_keys ADD COLUMN fido2_sign_count bigint",
    ]

    /// The log core's compare-and-swap (issue 40, SPEC §5.5; docs/architecture.md "The log
    /// core"): the daemon computes a batch's rows (seq, chain), tree nodes and checkpoint notes
    /// before any transaction, and the database only checks that the log's tail is still the
    /// one they were computed on and inserts them. `stepsign_ledger_insert` takes the ledger
    /// lock, reads the tail (and, when the batch names it, the number of log epochs, on which
    /// its checkpoints' origin depends), and inserts the arrays when they match; it answers the
    /// tail it found and whether it moved. `stepsign_ledger_commit` is the same in one `CALL`
    /// that COMMITs inside (or ROLLs BACK when the tail moved), so the lock is held only while
    /// the server works; a batch whose events bind records calls the function in a transaction
    /// of its own. No hashing on the append path: the statement trigger keeps the chain's
    /// links and the revoked keys, and no longer hashes each row again (the daemons' log core
    /// checks every entry's hash from its JWS, and the audit does). The older functions stay,
    /// unused.
    private static let v17: [String] = [
        """
        CREATE FUNCTION stepsign_ledger_insert(
            expected_size bigint, expected_hash bytea, expected_epochs integer,
            seqs bigint[], signature_ids text[], user_names text[], iats bigint[], kids text[], jwss text[],
            prev_hashes bytea[], entry_hashes bytea[], peer_uids bigint[], peer_pids integer[], peer_comms text[],
            auth_levels integer[], created timestamptz,
            node_ids bigint[], node_hashes bytea[],
            checkpoint_sizes bigint[], checkpoint_instances text[], checkpoint_notes text[]
        ) RETURNS TABLE (tail_seq bigint, tail_hash bytea, epoch_count integer, moved boolean)
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock(\(ledgerLockKey));
            SELECT l.seq, l.entry_hash INTO tail_seq, tail_hash FROM ledger l ORDER BY l.seq DESC LIMIT 1;
            IF NOT FOUND THEN
                tail_seq := 0;
                tail_hash := decode(repeat('00', 32), 'hex');
            END IF;
            moved := tail_seq <> expected_size OR tail_hash IS DISTINCT FROM expected_hash;
            IF expected_epochs IS NOT NULL OR moved THEN
                SELECT count(*)::integer INTO epoch_count FROM log_epochs;
                moved := moved OR (expected_epochs IS NOT NULL AND epoch_count <> expected_epochs);
            END IF;
            IF NOT moved THEN
                INSERT INTO ledger (seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                                    peer_uid, peer_pid, peer_comm, auth_level, created_at)
                SELECT r.seq, r.signature_id, r.user_name, r.iat, r.kid, r.jws, r.prev_hash, r.entry_hash,
                       r.peer_uid, r.peer_pid, r.peer_comm, r.auth_level, created
                  FROM unnest(seqs, signature_ids, user_names, iats, kids, jwss, prev_hashes, entry_hashes,
                              peer_uids, peer_pids, peer_comms, auth_levels)
                       AS r(seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                            peer_uid, peer_pid, peer_comm, auth_level)
                 ORDER BY r.seq;
                INSERT INTO ledger_tree (id, hash)
                SELECT n.id, n.hash FROM unnest(node_ids, node_hashes) AS n(id, hash) ORDER BY n.id;
                INSERT INTO log_checkpoints (size, instance, note, created_at)
                SELECT c.size, c.instance, c.note, created
                  FROM unnest(checkpoint_sizes, checkpoint_instances, checkpoint_notes) AS c(size, instance, note)
                ON CONFLICT (size, instance) DO NOTHING;
            END IF;
            RETURN NEXT;
        END
        $$
        """,
        """
        CREATE PROCEDURE stepsign_ledger_commit(
            expected_size bigint, expected_hash bytea, expected_epochs integer,
            seqs bigint[], signature_ids text[], user_names text[], iats bigint[], kids text[], jwss text[],
            prev_hashes bytea[], entry_hashes bytea[], peer_uids bigint[], peer_pids integer[], peer_comms text[],
            auth_levels integer[], created timestamptz,
            node_ids bigint[], node_hashes bytea[],
            checkpoint_sizes bigint[], checkpoint_instances text[], checkpoint_notes text[],
            INOUT tail_seq bigint, INOUT tail_hash bytea, INOUT epoch_count integer, INOUT moved boolean
        ) LANGUAGE plpgsql AS $$
        BEGIN
            SELECT i.tail_seq, i.tail_hash, i.epoch_count, i.moved INTO tail_seq, tail_hash, epoch_count, moved
              FROM stepsign_ledger_insert(expected_size, expected_hash, expected_epochs, seqs, signature_ids, user_names,
                                          iats, kids, jwss, prev_hashes, entry_hashes, peer_uids, peer_pids, peer_comms,
                                          auth_levels, created, node_ids, node_hashes,
                                          checkpoint_sizes, checkpoint_instances, checkpoint_notes) i;
            IF moved THEN
                ROLLBACK;
            ELSE
                COMMIT;
            END IF;
        END
        $$
        """,
        // v3/v7's rules without the hash of each row: every row still follows entry seq − 1 and
        // carries its hash as prev_hash, and none is signed with a revoked key.
        """
        CREATE OR REPLACE FUNCTION stepsign_ledger_rules() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            bad record;
            revoked text;
        BEGIN
            SELECT n.seq,
                   CASE WHEN n.expected IS NULL THEN 'does not follow an entry ' || (n.seq - 1)
                        ELSE 'does not chain to entry ' || (n.seq - 1) END AS problem
              INTO bad
              FROM (SELECT r.seq, r.prev_hash,
                           CASE WHEN r.seq = 1 THEN decode(repeat('00', 32), 'hex')
                                ELSE (SELECT p.entry_hash FROM ledger p WHERE p.seq = r.seq - 1) END AS expected
                      FROM stepsign_new_rows r) AS n
             WHERE n.expected IS NULL OR n.prev_hash IS DISTINCT FROM n.expected
             ORDER BY n.seq
             LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'ledger entry % %', bad.seq, bad.problem USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            SELECT n.kid INTO revoked
              FROM stepsign_new_rows n
             WHERE EXISTS (SELECT 1 FROM signing_keys k WHERE k.kid = n.kid AND k.revoked_at IS NOT NULL)
             LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'signing key % is revoked', revoked USING ERRCODE = '\(revokedKeySQLState)', DETAIL = revoked;
            END IF;
            RETURN NULL;
        END
        $$
        """,
    ]

    /// The log's turn (issue 40; docs/decisions.md, "One log core"): v17's insert, which first
    /// takes the turn's advisory lock shared, for its transaction, before the ledger lock. A
    /// batch that lost the race for the tail twice holds it exclusive on its own connection
    /// (a session lock; PostgreSQL queues later shared requests behind a waiting exclusive
    /// one, and a session's own exclusive lock does not block its shared request) until it
    /// commits: no other daemon's batch commits meanwhile, so it waits behind at most one.
    /// `stepsign_ledger_commit` calls the function and keeps its definition.
    private static let v18: [String] = [
        """
        CREATE OR REPLACE FUNCTION stepsign_ledger_insert(
            expected_size bigint, expected_hash bytea, expected_epochs integer,
            seqs bigint[], signature_ids text[], user_names text[], iats bigint[], kids text[], jwss text[],
            prev_hashes bytea[], entry_hashes bytea[], peer_uids bigint[], peer_pids integer[], peer_comms text[],
            auth_levels integer[], created timestamptz,
            node_ids bigint[], node_hashes bytea[],
            checkpoint_sizes bigint[], checkpoint_instances text[], checkpoint_notes text[]
        ) RETURNS TABLE (tail_seq bigint, tail_hash bytea, epoch_count integer, moved boolean)
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock_shared(\(ledgerTurnKey));
            PERFORM pg_advisory_xact_lock(\(ledgerLockKey));
            SELECT l.seq, l.entry_hash INTO tail_seq, tail_hash FROM ledger l ORDER BY l.seq DESC LIMIT 1;
            IF NOT FOUND THEN
                tail_seq := 0;
                tail_hash := decode(repeat('00', 32), 'hex');
            END IF;
            moved := tail_seq <> expected_size OR tail_hash IS DISTINCT FROM expected_hash;
            IF expected_epochs IS NOT NULL OR moved THEN
                SELECT count(*)::integer INTO epoch_count FROM log_epochs;
                moved := moved OR (expected_epochs IS NOT NULL AND epoch_count <> expected_epochs);
            END IF;
            IF NOT moved THEN
                INSERT INTO ledger (seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                                    peer_uid, peer_pid, peer_comm, auth_level, created_at)
                SELECT r.seq, r.signature_id, r.user_name, r.iat, r.kid, r.jws, r.prev_hash, r.entry_hash,
                       r.peer_uid, r.peer_pid, r.peer_comm, r.auth_level, created
                  FROM unnest(seqs, signature_ids, user_names, iats, kids, jwss, prev_hashes, entry_hashes,
                              peer_uids, peer_pids, peer_comms, auth_levels)
                       AS r(seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash,
                            peer_uid, peer_pid, peer_comm, auth_level)
                 ORDER BY r.seq;
                INSERT INTO ledger_tree (id, hash)
                SELECT n.id, n.hash FROM unnest(node_ids, node_hashes) AS n(id, hash) ORDER BY n.id;
                INSERT INTO log_checkpoints (size, instance, note, created_at)
                SELECT c.size, c.instance, c.note, created
                  FROM unnest(checkpoint_sizes, checkpoint_instances, checkpoint_notes) AS c(size, instance, note)
                ON CONFLICT (size, instance) DO NOTHING;
            END IF;
            RETURN NEXT;
        END
        $$
        """,
    ]

    /// Witnesses' cosignatures keyed by size, witness and line (SPEC §5.5–§5.6): a row written
    /// for (size, witness) behind the daemon's back no longer keeps the witness's genuine line
    /// out. The key is replaced in one statement; the append-only triggers stay as they are.
    private static let v19: [String] = [
        """
        ALTER TABLE log_cosignatures DROP CONSTRAINT log_cosignatures_pkey,
            ADD CONSTRAINT log_cosignatures_pkey PRIMARY KEY (size, witness, line)
        """,
    ]

    /// No hashing in the database (issue 40; docs/decisions.md, "One log core"): the log core
    /// hashes rows, tree nodes and notes in Swift, the append (v17/v18) and the import
    /// (`PostgresImport`) only insert, and the rules trigger (v17) checks links and revoked
    /// keys. What hashed and nothing calls any more goes: v3/v8's `stepsign_ledger_append`
    /// (it chained and hashed each row, and extended the tree), v8's `stepsign_tree_append`
    /// (the tree's hashes; v8 still uses it to build an old ledger's tree during its own
    /// upgrade, before this one), and v4's `stepsign_ledger_append_commit`, which only called
    /// `stepsign_ledger_append`. `stepsign_tree_index` (a storage index, no hash) stays.
    /// `IF EXISTS`: a database rolled back by hand to an older version may lack one.
    private static let v20: [String] = [
        "DROP PROCEDURE IF EXISTS stepsign_ledger_append_commit",
        "DROP FUNCTION IF EXISTS stepsign_ledger_append",
        "DROP FUNCTION IF EXISTS stepsign_tree_append",
    ]
}
