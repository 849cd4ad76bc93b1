-- Least-privilege access for stepsignd on PostgreSQL (SPEC §5.2).
--
-- Two roles: the OWNER owns the tables (it creates and migrates the schema: run a daemon,
-- or `stepsignd` once, as this role at installation and after an upgrade); the DAEMON role
-- is what every stepsignd logs in as day to day. The daemon role may read and write the
-- users, counters, keys and codes, but may only SELECT and INSERT the ledger, its
-- checkpoints and its Merkle tree: no UPDATE, DELETE or TRUNCATE, and it owns nothing, so
-- it cannot drop the append-only triggers either. A stolen daemon credential cannot rewrite
-- history.
--
-- Run as a superuser (or the owner) in the stepsign database, after the schema exists:
--   psql -d stepsign -v daemon=stepsign -f docs/sql/roles.sql
-- Both roles must exist, e.g.:
--   CREATE ROLE stepsign_owner LOGIN;   -- with a password of its own if not peer-authenticated
--   CREATE ROLE stepsign LOGIN;
--   CREATE DATABASE stepsign OWNER stepsign_owner;
\set ON_ERROR_STOP on
\if :{?daemon}
\else
\set daemon stepsign
\endif

BEGIN;
GRANT CONNECT ON DATABASE :"DBNAME" TO :"daemon";
GRANT USAGE ON SCHEMA public TO :"daemon";
-- Nothing beyond what is granted below (a role could have been given more before).
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM :"daemon";
GRANT SELECT, INSERT, UPDATE, DELETE ON
    users, password_history, device_keys, activation_codes, signing_keys,
    name_counters, activation_budgets, used_once, approvals, approval_votes, group_members,
    attempt_reservations, idempotency_keys
    TO :"daemon";
GRANT SELECT ON store_secrets, stepsign_schema_migrations TO :"daemon";
-- The ledger, its checkpoints and its Merkle tree: append and read, never change.
GRANT SELECT, INSERT ON ledger, ledger_checkpoints, ledger_tree, log_checkpoints, log_origin, log_cosignatures,
    log_epochs, approval_events TO :"daemon";
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO :"daemon";
COMMIT;
