/*
 * stepsign-floor: the floor of stepsignd's level-0 design, in plain C (issue 43).
 *
 * Not a product and not a second implementation: a measurement. It does what a level-0
 * signature through stepsignd must do, with nothing else, so that `scripts/bench-floor` can
 * say what CPU per signature the design itself costs on this host:
 *   - a Unix socket, one request a line (`stepsign-loadgen sign` speaks to it unchanged);
 *   - event-loop threads (epoll), as many as cores, each owning its connections;
 *   - per request: the claims (the same fields and sizes as stepsignd's), a JWS ES256 through
 *     libcrypto's EVP_PKEY_sign with a context reused per thread, its DER read into r||s,
 *     and the two SHA-256 hashes the log needs of each JWS, all on the loop;
 *   - one ledger thread: group commit of every row queued, in one SQLite transaction with
 *     stepsignd's ledger table (its columns, UNIQUE signature_id, its triggers and partial
 *     indexes) and its tree table (a row per complete subtree, 16 rows a statement), journal
 *     WAL and synchronous = FULL, so every row is durable before its reply;
 *   - the reply line (the same fields and size as stepsignd's) written once the row is durable,
 *     the loop woken by an eventfd once per batch.
 * No JSON parser (the payload is found by its key), no access policy, no metrics, no logs.
 *
 * Usage: stepsign-floor --socket SOCKET --state-dir DIR [--config IGNORED] [--loops N]
 * (stepsignd's options, so that `scripts/bench-ab` runs it beside stepsignd builds; the ledger
 * is DIR/ledger.db, the loops as many as the cores unless --loops says).
 * Built and run by `scripts/bench-floor`.
 */
#define _GNU_SOURCE
#define OPENSSL_SUPPRESS_DEPRECATED  /* SHA256_Init: what stepsignd's shim uses too */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sqlite3.h>

#define MAX_LOOPS 16
#define IN_CAP 8192

static void die(const char *what) {
    fprintf(stderr, "stepsign-floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void die_sqlite(sqlite3 *db, const char *what) {
    fprintf(stderr, "stepsign-floor: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
}

struct conn {
    int fd;
    struct loop *loop;
    char in[IN_CAP];
    size_t in_len;
    int uid, pid;
};

struct item {
    struct item *next;
    struct conn *conn;
    long request_id;
    char id[37];
    char jws[2048];
    size_t jws_len;
    unsigned char leaf[32];
    unsigned char entry[32];
    char payload[1024];
    size_t payload_len;
    long seq;
};

struct loop {
    int epoll;
    int wake;              /* eventfd: the ledger thread's "rows of yours are durable" */
    pthread_mutex_t lock;  /* guards done */
    struct item *done;
    EVP_PKEY_CTX *sign;
    char out[8192];
    pthread_t thread;
};

static struct loop loops[MAX_LOOPS];
static int loop_count = 2;
static EVP_PKEY *key;
static const char *header_b64;
static size_t header_b64_len;

/* The ledger thread's queue. */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static struct item *queue_head, *queue_tail;

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t base64url(const unsigned char *in, size_t n, char *out) {
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
        out[o++] = b64url[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = b64url[v >> 18];
        out[o++] = b64url[(v >> 12) & 63];
        out[o++] = b64url[(v >> 6) & 63];
    }
    return o;
}

static void uuid7(char out[37]) {
    unsigned char b[16];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    if (RAND_bytes(b + 6, 10) != 1) die("RAND_bytes");
    for (int i = 0; i < 6; i++) b[i] = (unsigned char)(ms >> (40 - 8 * i));
    b[6] = (b[6] & 0x0F) | 0x70;
    b[8] = (b[8] & 0x3F) | 0x80;
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The JWS of one request, and the two hashes the log keeps of it. */
static void sign_item(struct loop *loop, struct item *item) {
    char claims[1536];
    int n = snprintf(claims, sizeof claims,
                     "{\"iss\":\"stepsign-dev\",\"sub\":\"alice\",\"jti\":\"%s\",\"iat\":%ld,\"payload\":\"%.*s\","
                     "\"payloadLength\":%zu,\"reason\":\"Benchmark\",\"authLevel\":0,\"authenticatorType\":0,"
                     "\"authenticatorUsed\":\"none\",\"peer\":{\"uid\":%d,\"pid\":%d,\"comm\":\"stepsign-loadge\"}}",
                     item->id, (long)time(NULL), (int)item->payload_len, item->payload, item->payload_len,
                     item->conn->uid, item->conn->pid);
    char *jws = item->jws;
    memcpy(jws, header_b64, header_b64_len);
    size_t len = header_b64_len;
    jws[len++] = '.';
    len += base64url((unsigned char *)claims, (size_t)n, jws + len);
    unsigned char digest[32], der[80], raw[64];
    SHA256((unsigned char *)jws, len, digest);
    size_t der_len = sizeof der;
    if (EVP_PKEY_sign(loop->sign, der, &der_len, digest, sizeof digest) != 1) die("EVP_PKEY_sign");
    const unsigned char *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
    if (!sig) die("d2i_ECDSA_SIG");
    if (BN_bn2binpad(ECDSA_SIG_get0_r(sig), raw, 32) != 32 || BN_bn2binpad(ECDSA_SIG_get0_s(sig), raw + 32, 32) != 32)
        die("BN_bn2binpad");
    ECDSA_SIG_free(sig);
    jws[len++] = '.';
    len += base64url(raw, 64, jws + len);
    item->jws_len = len;
    /* The leaf hash and the entry's own hash (stepsignd's LedgerAppend computes both on the loop). */
    unsigned char zero = 0;
    SHA256_CTX c;
    SHA256_Init(&c);
    SHA256_Update(&c, &zero, 1);
    SHA256_Update(&c, jws, len);
    SHA256_Final(item->leaf, &c);
    SHA256((unsigned char *)jws, len, item->entry);
}

static void enqueue(struct item *item) {
    item->next = NULL;
    pthread_mutex_lock(&queue_lock);
    int was_empty = queue_head == NULL;
    if (queue_tail) queue_tail->next = item; else queue_head = item;
    queue_tail = item;
    pthread_mutex_unlock(&queue_lock);
    if (was_empty) pthread_cond_signal(&queue_ready);
}

/* One request line: find the id and the payload, sign, queue for the ledger. */
static void handle_line(struct conn *conn, const char *line, size_t len) {
    struct item *item = calloc(1, sizeof *item);
    if (!item) die("calloc");
    item->conn = conn;
    const char *id = memmem(line, len, "\"id\":", 5);
    item->request_id = id ? strtol(id + 5, NULL, 10) : 0;
    const char *payload = memmem(line, len, "\"payload\":\"", 11);
    if (payload) {
        payload += 11;
        const char *end = memchr(payload, '"', (size_t)(line + len - payload));
        size_t n = end ? (size_t)(end - payload) : 0;
        if (n > sizeof item->payload) n = sizeof item->payload;
        memcpy(item->payload, payload, n);
        item->payload_len = n;
    }
    uuid7(item->id);
    sign_item(conn->loop, item);
    enqueue(item);
}

static void reply(struct loop *loop, struct item *item) {
    int n = snprintf(loop->out, sizeof loop->out,
                     "{\"id\":%ld,\"error\":{\"code\":0,\"message\":\"OK\"},\"events\":[{\"event\":\"onAuthenticateUserAndSignData\","
                     "\"details\":{\"dataPayload\":\"%.*s\",\"dataPayloadLength\":%zu,\"reason\":\"Benchmark\","
                     "\"payloadSignature\":\"%.*s\",\"dataSignatureID\":\"%s\",\"authLevel\":0,\"authenticatorType\":0,"
                     "\"authenticatorUsed\":\"none\",\"logIndex\":%ld},\"status\":{\"code\":100,\"message\":\"Success\"},"
                     "\"error\":{\"code\":0,\"message\":\"Success\"}}]}\n",
                     item->request_id, (int)item->payload_len, item->payload, item->payload_len, (int)item->jws_len,
                     item->jws, item->id, item->seq - 1);
    const char *p = loop->out;
    size_t left = (size_t)n;
    while (left > 0) {  /* one write in practice; a full socket buffer is not expected at window 1 */
        ssize_t w = write(item->conn->fd, p, left);
        if (w < 0) { if (errno == EINTR) continue; if (errno == EAGAIN) { usleep(100); continue; } break; }
        p += w;
        left -= (size_t)w;
    }
}

static void read_conn(struct conn *conn) {
    for (;;) {
        ssize_t r = read(conn->fd, conn->in + conn->in_len, IN_CAP - conn->in_len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return;
        if (r <= 0) {  /* closed (a reply in flight for it is not expected at the end of a run) */
            epoll_ctl(conn->loop->epoll, EPOLL_CTL_DEL, conn->fd, NULL);
            close(conn->fd);
            conn->fd = -1;
            return;
        }
        conn->in_len += (size_t)r;
        size_t start = 0;
        char *nl;
        while ((nl = memchr(conn->in + start, '\n', conn->in_len - start))) {
            handle_line(conn, conn->in + start, (size_t)(nl - (conn->in + start)));
            start = (size_t)(nl - conn->in) + 1;
        }
        memmove(conn->in, conn->in + start, conn->in_len - start);
        conn->in_len -= start;
        if (r < 512) return;  /* drained: no need for the read that would say EAGAIN */
    }
}

static void *run_loop(void *arg) {
    struct loop *loop = arg;
    struct epoll_event events[64];
    for (;;) {
        int n = epoll_wait(loop->epoll, events, 64, -1);
        if (n < 0) { if (errno == EINTR) continue; die("epoll_wait"); }
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr == NULL) {
                uint64_t v;
                if (read(loop->wake, &v, sizeof v) < 0 && errno != EAGAIN) die("read eventfd");
                pthread_mutex_lock(&loop->lock);
                struct item *done = loop->done;
                loop->done = NULL;
                pthread_mutex_unlock(&loop->lock);
                while (done) {
                    struct item *next = done->next;
                    if (done->conn->fd >= 0) reply(loop, done);
                    free(done);
                    done = next;
                }
            } else {
                read_conn(events[i].data.ptr);
            }
        }
    }
    return NULL;
}

/* The ledger: group commit. */
static sqlite3 *db;
static sqlite3_stmt *begin_stmt, *commit_stmt, *insert_entry, *insert_nodes[5], *revoked_stmt;
static unsigned char prev_hash[32];
static long next_seq = 1;
static long tree_size;
/* The roots of the complete subtrees on the tree's right edge, by height. */
static unsigned char frontier[64][32];
static long next_node_id;
/* Commits and rows so far, printed each second to stderr (the batch size). */
static volatile long commits, rows;

static void prepare(const char *sql, sqlite3_stmt **stmt) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL) != SQLITE_OK) die_sqlite(db, sql);
}

static void step_done(sqlite3_stmt *stmt) {
    if (sqlite3_step(stmt) != SQLITE_DONE) die_sqlite(db, "step");
    sqlite3_reset(stmt);
}

static void insert_tree_rows(unsigned char (*hashes)[32], long *ids, int count) {
    int at = 0;
    while (at < count) {
        int k = 4;
        while ((1 << k) > count - at) k--;
        sqlite3_stmt *stmt = insert_nodes[k];
        for (int j = 0; j < (1 << k); j++) {
            sqlite3_bind_int64(stmt, 2 * j + 1, ids[at + j]);
            sqlite3_bind_blob(stmt, 2 * j + 2, hashes[at + j], 32, SQLITE_STATIC);
        }
        step_done(stmt);
        at += 1 << k;
    }
}

static void *run_ledger(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "stepsign-ledger");
    static unsigned char node_hashes[4096][32];
    static long node_ids[4096];
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        while (!queue_head) pthread_cond_wait(&queue_ready, &queue_lock);
        struct item *batch = queue_head;
        queue_head = queue_tail = NULL;
        pthread_mutex_unlock(&queue_lock);

        step_done(begin_stmt);
        /* The batch's key is not revoked (stepsignd checks each kid once per batch). */
        sqlite3_bind_text(revoked_stmt, 1, "floor-key", -1, SQLITE_STATIC);
        if (sqlite3_step(revoked_stmt) == SQLITE_ROW) { fprintf(stderr, "revoked\n"); exit(1); }
        sqlite3_reset(revoked_stmt);
        int nodes = 0;
        double now = (double)time(NULL);
        for (struct item *item = batch; item; item = item->next) {
            item->seq = next_seq++;
            unsigned char chain[32];
            SHA256_CTX c;
            SHA256_Init(&c);
            SHA256_Update(&c, prev_hash, 32);
            SHA256_Update(&c, item->entry, 32);
            SHA256_Final(chain, &c);
            sqlite3_stmt *s = insert_entry;
            sqlite3_bind_int64(s, 1, item->seq);
            sqlite3_bind_text(s, 2, item->id, 36, SQLITE_STATIC);
            sqlite3_bind_text(s, 3, "alice", 5, SQLITE_STATIC);
            sqlite3_bind_int64(s, 4, (sqlite3_int64)now);
            sqlite3_bind_text(s, 5, "floor-key", 9, SQLITE_STATIC);
            sqlite3_bind_text(s, 6, item->jws, (int)item->jws_len, SQLITE_STATIC);
            sqlite3_bind_blob(s, 7, prev_hash, 32, SQLITE_STATIC);
            sqlite3_bind_blob(s, 8, chain, 32, SQLITE_STATIC);
            sqlite3_bind_int(s, 9, item->conn->uid);
            sqlite3_bind_int(s, 10, item->conn->pid);
            sqlite3_bind_text(s, 11, "stepsign-loadge", -1, SQLITE_STATIC);
            sqlite3_bind_int(s, 12, 0);
            sqlite3_bind_double(s, 13, now);
            step_done(s);
            memcpy(prev_hash, chain, 32);
            /* The tree: the leaf, then each subtree it completes (RFC 6962 hashes). */
            unsigned char node[32];
            memcpy(node, item->leaf, 32);
            int height = 0;
            long size = tree_size;
            memcpy(node_hashes[nodes], node, 32);
            node_ids[nodes++] = next_node_id++;
            while (size & 1) {
                unsigned char one = 1;
                SHA256_Init(&c);
                SHA256_Update(&c, &one, 1);
                SHA256_Update(&c, frontier[height], 32);
                SHA256_Update(&c, node, 32);
                SHA256_Final(node, &c);
                memcpy(node_hashes[nodes], node, 32);
                node_ids[nodes++] = next_node_id++;
                size >>= 1;
                height++;
            }
            memcpy(frontier[height], node, 32);
            tree_size++;
            if (nodes > 4000) { insert_tree_rows(node_hashes, node_ids, nodes); nodes = 0; }
        }
        insert_tree_rows(node_hashes, node_ids, nodes);
        step_done(commit_stmt);  /* durable: synchronous = FULL */
        commits++;
        rows = next_seq - 1;

        /* Hand each row back to its loop; one wake-up per loop per batch. */
        int woken[MAX_LOOPS] = {0};
        while (batch) {
            struct item *next = batch->next;
            struct loop *loop = batch->conn->loop;
            pthread_mutex_lock(&loop->lock);
            batch->next = loop->done;
            loop->done = batch;
            pthread_mutex_unlock(&loop->lock);
            woken[loop - loops] = 1;
            batch = next;
        }
        for (int i = 0; i < loop_count; i++) {
            if (!woken[i]) continue;
            uint64_t one = 1;
            if (write(loops[i].wake, &one, sizeof one) < 0) die("write eventfd");
        }
    }
    return NULL;
}

static void open_ledger(const char *path) {
    if (sqlite3_open(path, &db) != SQLITE_OK) die_sqlite(db, path);
    const char *schema =
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
        "CREATE TABLE IF NOT EXISTS signing_keys (kid TEXT PRIMARY KEY, revoked_at REAL) STRICT;"
        "CREATE TABLE IF NOT EXISTS ledger (seq INTEGER PRIMARY KEY CHECK (seq >= 1), signature_id TEXT NOT NULL UNIQUE,"
        " user_name TEXT NOT NULL, iat INTEGER NOT NULL, kid TEXT NOT NULL, jws TEXT NOT NULL,"
        " prev_hash BLOB NOT NULL CHECK (length(prev_hash) = 32), entry_hash BLOB NOT NULL CHECK (length(entry_hash) = 32),"
        " peer_uid INTEGER NOT NULL, peer_pid INTEGER NOT NULL, peer_comm TEXT NOT NULL, auth_level INTEGER NOT NULL,"
        " created_at REAL NOT NULL) STRICT;"
        "CREATE TRIGGER IF NOT EXISTS ledger_no_update BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'append-only'); END;"
        "CREATE TRIGGER IF NOT EXISTS ledger_no_delete BEFORE DELETE ON ledger BEGIN SELECT RAISE(ABORT, 'append-only'); END;"
        "CREATE INDEX IF NOT EXISTS ledger_events ON ledger(seq) WHERE auth_level < 0;"
        "CREATE INDEX IF NOT EXISTS ledger_user_events ON ledger(user_name, seq) WHERE auth_level < 0;"
        "CREATE TABLE IF NOT EXISTS ledger_tree (id INTEGER PRIMARY KEY CHECK (id >= 0),"
        " hash BLOB NOT NULL CHECK (length(hash) = 32)) STRICT;"
        "CREATE TRIGGER IF NOT EXISTS ledger_tree_no_update BEFORE UPDATE ON ledger_tree BEGIN SELECT RAISE(ABORT, 'append-only'); END;"
        "CREATE TRIGGER IF NOT EXISTS ledger_tree_no_delete BEFORE DELETE ON ledger_tree BEGIN SELECT RAISE(ABORT, 'append-only'); END;";
    char *error = NULL;
    if (sqlite3_exec(db, schema, NULL, NULL, &error) != SQLITE_OK) { fprintf(stderr, "schema: %s\n", error); exit(1); }
    prepare("BEGIN IMMEDIATE", &begin_stmt);
    prepare("COMMIT", &commit_stmt);
    prepare("SELECT 1 FROM signing_keys WHERE kid = ? AND revoked_at IS NOT NULL", &revoked_stmt);
    prepare("INSERT INTO ledger (seq, signature_id, user_name, iat, kid, jws, prev_hash, entry_hash, peer_uid, peer_pid,"
            " peer_comm, auth_level, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &insert_entry);
    for (int k = 0; k <= 4; k++) {
        char sql[1024] = "INSERT INTO ledger_tree (id, hash) VALUES (?, ?)";
        for (int j = 1; j < (1 << k); j++) strcat(sql, ", (?, ?)");
        prepare(sql, &insert_nodes[k]);
    }
}

static void *run_stats(void *arg) {
    (void)arg;
    for (;;) {
        sleep(1);
        fprintf(stderr, "commits=%ld rows=%ld\n", commits, rows);
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *socket_path = NULL, *state_dir = NULL;
    loop_count = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--socket")) socket_path = argv[i + 1];
        else if (!strcmp(argv[i], "--state-dir")) state_dir = argv[i + 1];
        else if (!strcmp(argv[i], "--loops")) loop_count = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--config") != 0) { fprintf(stderr, "stepsign-floor: unknown option %s\n", argv[i]); return 2; }
    }
    if (!socket_path || !state_dir) {
        fprintf(stderr, "usage: stepsign-floor --socket SOCKET --state-dir DIR [--config IGNORED] [--loops N]\n");
        return 2;
    }
    if (loop_count < 1 || loop_count > MAX_LOOPS) loop_count = loop_count < 1 ? 1 : MAX_LOOPS;
    if (mkdir(state_dir, 0700) < 0 && errno != EEXIST) die(state_dir);
    char database[4096];
    snprintf(database, sizeof database, "%s/ledger.db", state_dir);
    signal(SIGPIPE, SIG_IGN);
    key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (!key) die("EVP_PKEY_Q_keygen");
    static char header[128];
    const char *h = "{\"alg\":\"ES256\",\"kid\":\"HVRMFCx7TsmVAsia7ZAKF-_A1XvqSGhLAHrdyTzGehg\",\"typ\":\"stepsign+jwt\"}";
    header_b64_len = base64url((const unsigned char *)h, strlen(h), header);
    header_b64 = header;
    open_ledger(database);

    for (int i = 0; i < loop_count; i++) {
        struct loop *loop = &loops[i];
        pthread_mutex_init(&loop->lock, NULL);
        if ((loop->epoll = epoll_create1(EPOLL_CLOEXEC)) < 0) die("epoll_create1");
        if ((loop->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) die("eventfd");
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, loop->wake, &ev) < 0) die("epoll_ctl");
        if (!(loop->sign = EVP_PKEY_CTX_new(key, NULL)) || EVP_PKEY_sign_init(loop->sign) != 1) die("EVP_PKEY_sign_init");
        if (pthread_create(&loop->thread, NULL, run_loop, loop) != 0) die("pthread_create");
    }
    pthread_t ledger, stats;
    if (pthread_create(&ledger, NULL, run_ledger, NULL) != 0 || pthread_create(&stats, NULL, run_stats, NULL) != 0)
        die("pthread_create");

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path);
    unlink(socket_path);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(listener, 1024) < 0) die("bind");
    for (int next = 0;; next = (next + 1) % loop_count) {
        int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) { if (errno == EINTR || errno == ECONNABORTED) continue; die("accept4"); }
        struct conn *conn = calloc(1, sizeof *conn);
        if (!conn) die("calloc");
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) { conn->uid = (int)cred.uid; conn->pid = (int)cred.pid; }
        conn->fd = fd;
        conn->loop = &loops[next];
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = conn};
        if (epoll_ctl(conn->loop->epoll, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
    }
}
