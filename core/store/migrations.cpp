// The database's migrations, one SQL script each (docs/formats/database.md lists them): applied
// in order by Database::migrate (core/store/database.cpp), never edited once released.
#include "sealtrain/core/store/database.h"

#include <string_view>
#include <vector>

namespace sealtrain::core {
namespace {

// Version 1: identities, roles, grants, sessions and the audit log.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    totp_secret BLOB NOT NULL,
    totp_last_step INTEGER NOT NULL DEFAULT 0,
    disabled INTEGER NOT NULL DEFAULT 0,
    failed_attempts INTEGER NOT NULL DEFAULT 0,
    locked_until INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL
);
CREATE TABLE roles (
    name TEXT PRIMARY KEY,
    builtin INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE role_permissions (
    role TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
    permission TEXT NOT NULL,
    PRIMARY KEY (role, permission)
);
CREATE TABLE grants (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    role TEXT NOT NULL REFERENCES roles(name),
    project TEXT NOT NULL DEFAULT '',
    expires INTEGER NOT NULL DEFAULT 0,
    break_glass INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    UNIQUE (user_id, role, project)
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    token_hash BLOB NOT NULL UNIQUE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    created INTEGER NOT NULL,
    last_used INTEGER NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE audit_entries (
    sequence INTEGER PRIMARY KEY,
    bytes BLOB NOT NULL,
    leaf_hash BLOB NOT NULL
);
CREATE TABLE audit_heads (
    id INTEGER PRIMARY KEY,
    note TEXT NOT NULL
);
)sql";

// Version 2: submissions that need a second person's approval, bound to a content hash.
constexpr std::string_view kSchemaV2 = R"sql(
CREATE TABLE submissions (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT '',
    submitter INTEGER NOT NULL REFERENCES users(id),
    content_hash BLOB NOT NULL,
    created INTEGER NOT NULL
);
CREATE TABLE approvals (
    id INTEGER PRIMARY KEY,
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    approver INTEGER NOT NULL REFERENCES users(id),
    content_hash BLOB NOT NULL,
    created INTEGER NOT NULL
);
)sql";

// Version 3 (issue #6): sealed datasets, their versions and lineage, and per-dataset read grants.
// A dataset's files live in the data directory under datasets/<hex of its id>/.
constexpr std::string_view kSchemaV3 = R"sql(
CREATE TABLE datasets (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    parent TEXT REFERENCES datasets(id),
    classification TEXT NOT NULL,
    creator INTEGER NOT NULL REFERENCES users(id),
    records INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    signer TEXT NOT NULL,
    created INTEGER NOT NULL,
    UNIQUE (name, version)
);
CREATE TABLE dataset_grants (
    dataset_id TEXT NOT NULL REFERENCES datasets(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    granted_by INTEGER NOT NULL REFERENCES users(id),
    created INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, user_id)
);
)sql";

// Version 4 (issue #13): credential resets. A reset user has no password and no TOTP secret
// until they set their own with a one-time reset code, of which only the SHA-256 is kept
// (`reset_code_hash`, NULL when no reset is open). A reset of someone who administers identities
// waits in `pending_resets` until a second admin approves it.
constexpr std::string_view kSchemaV4 = R"sql(
ALTER TABLE users ADD COLUMN reset_code_hash BLOB;
CREATE TABLE pending_resets (
    user_id INTEGER PRIMARY KEY REFERENCES users(id),
    requested_by INTEGER NOT NULL REFERENCES users(id),
    created INTEGER NOT NULL
);
)sql";

// Version 5 (issue #16): training jobs, their canonical spec and its SHA-256, the vetting report,
// who approved which spec (an edit clears it), restarts and GPU hours (in thousandths).
constexpr std::string_view kSchemaV5 = R"sql(
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    project TEXT NOT NULL,
    state TEXT NOT NULL,
    submitter INTEGER NOT NULL REFERENCES users(id),
    approver INTEGER REFERENCES users(id),
    spec TEXT NOT NULL,
    spec_hash BLOB NOT NULL,
    approved_hash BLOB,
    dataset_id TEXT,
    pool TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    vetting TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    restarts INTEGER NOT NULL DEFAULT 0,
    max_restarts INTEGER NOT NULL,
    gpu_millihours_limit INTEGER NOT NULL,
    gpu_millihours_used INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL
);
CREATE INDEX jobs_by_project ON jobs (project, state);
)sql";

// Version 6 (issue #16): enrolled workers and their one-time enrolment tokens (SHA-256 only), the
// scheduler's columns on jobs (the worker and attempt that run it, the GPU hours of attempts before
// the current one, when the attempt started and ended), verified checkpoints and metrics lines.
// Two active workers never share a name; a revoked worker's name may be enrolled again. The
// built-in operator role of a database made before gains the new permission worker.read.
constexpr std::string_view kSchemaV6 = R"sql(
CREATE TABLE workers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    pool TEXT NOT NULL,
    state TEXT NOT NULL,
    serial TEXT NOT NULL UNIQUE,
    certificate TEXT NOT NULL,
    signing_key TEXT NOT NULL,
    box_key BLOB NOT NULL,
    inventory TEXT NOT NULL,
    enrolled INTEGER NOT NULL,
    last_seen INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX workers_active_name ON workers (name) WHERE state = 'active';
CREATE TABLE worker_tokens (
    id INTEGER PRIMARY KEY,
    token_hash BLOB NOT NULL UNIQUE,
    worker TEXT NOT NULL,
    pool TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    created INTEGER NOT NULL,
    expires INTEGER NOT NULL,
    used INTEGER
);
ALTER TABLE jobs ADD COLUMN worker_id INTEGER REFERENCES workers(id);
ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gpu_millihours_earlier INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN started INTEGER;
ALTER TABLE jobs ADD COLUMN finished INTEGER;
CREATE INDEX jobs_queue ON jobs (state, pool, priority DESC, id);
CREATE INDEX jobs_by_worker ON jobs (worker_id, state);
CREATE TABLE job_checkpoints (
    job_id INTEGER NOT NULL REFERENCES jobs(id),
    step INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    worker_id INTEGER NOT NULL REFERENCES workers(id),
    sealed_sha256 TEXT NOT NULL,
    plaintext_sha256 TEXT NOT NULL,
    file_base TEXT NOT NULL,
    recorded INTEGER NOT NULL,
    PRIMARY KEY (job_id, step)
);
CREATE TABLE job_metrics (
    job_id INTEGER NOT NULL REFERENCES jobs(id),
    kind TEXT NOT NULL,
    step INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (job_id, kind, step)
);
INSERT OR IGNORE INTO role_permissions (role, permission)
    SELECT name, 'worker.read' FROM roles WHERE name = 'operator' AND builtin = 1;
)sql";

// Migration 7 (issue #27): sign-in failures and lockouts counted per account and peer, so that
// nobody can lock an account from where its user signs in. The users table's failed_attempts
// and locked_until are no longer used.
constexpr std::string_view kSchemaV7 = R"sql(
CREATE TABLE sign_in_failures (
    user_id INTEGER NOT NULL REFERENCES users(id),
    peer TEXT NOT NULL,
    failed_attempts INTEGER NOT NULL,
    locked_until INTEGER NOT NULL,
    last_failed INTEGER NOT NULL,
    PRIMARY KEY (user_id, peer)
);
UPDATE users SET failed_attempts = 0, locked_until = 0;
)sql";

// Migration 8 (issue #27): grants of separated-duty roles that wait for a second admin.
constexpr std::string_view kSchemaV8 = R"sql(
CREATE TABLE pending_grants (
    user_id INTEGER NOT NULL REFERENCES users(id),
    role TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
    project TEXT NOT NULL,
    requested_by INTEGER NOT NULL REFERENCES users(id),
    created INTEGER NOT NULL,
    PRIMARY KEY (user_id, role, project)
);
)sql";

// Migration 9 (issue #27, item 19): whether an operator declared a worker's interconnect
// encrypted (worker.interconnect); multi-node jobs are dispatched only to such workers, whatever
// the worker's own inventory claims.
constexpr std::string_view kSchemaV9 = R"sql(
ALTER TABLE workers ADD COLUMN interconnect_declared INTEGER NOT NULL DEFAULT 0;
)sql";

// Migration 10 (issue #29): a signed-in user's replacement of their own TOTP secret
// (identity/totp_change.cpp). The new secret waits here until a code from it confirms it, at most
// kTotpChangeLifetime and kTotpConfirmAttempts wrong codes.
constexpr std::string_view kSchemaV10 = R"sql(
ALTER TABLE users ADD COLUMN totp_pending BLOB;
ALTER TABLE users ADD COLUMN totp_pending_expires INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN totp_pending_misses INTEGER NOT NULL DEFAULT 0;
)sql";

// Migration 11 (issue #30, tracking): each attempt of a job (its run) with the worker that ran it,
// the checkpoint step it resumed from and how it ended, and the attempt that recorded each
// metrics line (0 for the lines recorded before). The jobs that ran before keep only their last
// attempt, which the jobs table knew; an attempt whose job waits again lost its worker.
constexpr std::string_view kSchemaV11 = R"sql(
CREATE TABLE job_attempts (
    job_id INTEGER NOT NULL REFERENCES jobs(id),
    attempt INTEGER NOT NULL,
    worker_id INTEGER REFERENCES workers(id),
    started INTEGER NOT NULL,
    resumed_step INTEGER NOT NULL,
    ended INTEGER,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (job_id, attempt)
);
ALTER TABLE job_metrics ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
INSERT INTO job_attempts (job_id, attempt, worker_id, started, resumed_step, ended, outcome, reason)
    SELECT id, attempt, worker_id, COALESCE(started, updated), 0, finished,
           CASE WHEN finished IS NULL THEN 'running' WHEN state = 'queued' THEN 'lost'
                ELSE state END,
           reason
    FROM jobs WHERE attempt > 0;
)sql";

// Migration 12 (issue #30, registry): model versions registered from recorded checkpoints, the
// promotions that move their aliases once a second person approves them (bound to the version's
// digest), and the aliases themselves. The built-in engineer and approver roles gain the model
// permissions (model.register, model.approve) as new data directories give them.
constexpr std::string_view kSchemaV12 = R"sql(
CREATE TABLE model_versions (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    project TEXT NOT NULL,
    description TEXT NOT NULL,
    job_id INTEGER NOT NULL REFERENCES jobs(id),
    step INTEGER NOT NULL,
    digest TEXT NOT NULL,
    sealed_sha256 TEXT NOT NULL,
    worker TEXT NOT NULL,
    dataset_id TEXT NOT NULL,
    registered_by INTEGER NOT NULL REFERENCES users(id),
    registered INTEGER NOT NULL,
    statement TEXT NOT NULL,
    UNIQUE (name, version),
    UNIQUE (name, job_id, step)
);
CREATE TABLE model_promotions (
    id INTEGER PRIMARY KEY,
    version_id INTEGER NOT NULL REFERENCES model_versions(id),
    alias TEXT NOT NULL,
    digest TEXT NOT NULL,
    reason TEXT NOT NULL,
    requested_by INTEGER NOT NULL REFERENCES users(id),
    requested INTEGER NOT NULL,
    state TEXT NOT NULL,
    decided_by INTEGER REFERENCES users(id),
    decided INTEGER,
    decision_reason TEXT NOT NULL DEFAULT '',
    previous_version INTEGER,
    statement TEXT
);
CREATE TABLE model_aliases (
    name TEXT NOT NULL,
    alias TEXT NOT NULL,
    version_id INTEGER NOT NULL REFERENCES model_versions(id),
    promotion_id INTEGER NOT NULL REFERENCES model_promotions(id),
    PRIMARY KEY (name, alias)
);
INSERT OR IGNORE INTO role_permissions (role, permission)
    SELECT name, 'model.register' FROM roles WHERE name = 'engineer' AND builtin = 1;
INSERT OR IGNORE INTO role_permissions (role, permission)
    SELECT name, 'model.approve' FROM roles WHERE name = 'approver' AND builtin = 1;
)sql";

// Migration 13 (issue #30, exports): a model version's export, asked by one person and approved
// by another for the version's digest; each download counted, the folder's digest kept.
constexpr std::string_view kSchemaV13 = R"sql(
CREATE TABLE model_exports (
    id INTEGER PRIMARY KEY,
    version_id INTEGER NOT NULL REFERENCES model_versions(id),
    digest TEXT NOT NULL,
    reason TEXT NOT NULL,
    requested_by INTEGER NOT NULL REFERENCES users(id),
    requested INTEGER NOT NULL,
    state TEXT NOT NULL,
    decided_by INTEGER REFERENCES users(id),
    decided INTEGER,
    decision_reason TEXT NOT NULL DEFAULT '',
    downloads INTEGER NOT NULL DEFAULT 0,
    folder_digest TEXT NOT NULL DEFAULT ''
);
)sql";

// Migration 14 (issue #30, base models): a version is a job's checkpoint or an imported GPT-2
// folder, so job_id may be empty; what the version's tokenizer is (an import's files by digest),
// the model a job's version started from, and the imported folders' files. SQLite changes a
// column's constraint only by rebuilding the table (Database::migrate turns foreign keys off
// for it and checks them before it commits).
constexpr std::string_view kSchemaV14 = R"sql(
CREATE TABLE model_versions_v14 (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    project TEXT NOT NULL,
    description TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'job',
    job_id INTEGER REFERENCES jobs(id),
    step INTEGER NOT NULL,
    digest TEXT NOT NULL,
    sealed_sha256 TEXT NOT NULL,
    worker TEXT NOT NULL,
    dataset_id TEXT NOT NULL,
    tokenizer TEXT NOT NULL DEFAULT '',
    shape TEXT NOT NULL DEFAULT '',
    base TEXT NOT NULL DEFAULT '',
    registered_by INTEGER NOT NULL REFERENCES users(id),
    registered INTEGER NOT NULL,
    statement TEXT NOT NULL,
    UNIQUE (name, version),
    UNIQUE (name, job_id, step)
);
INSERT INTO model_versions_v14 (id, name, version, project, description, job_id, step, digest,
                                sealed_sha256, worker, dataset_id, registered_by, registered,
                                statement)
    SELECT id, name, version, project, description, job_id, step, digest, sealed_sha256, worker,
           dataset_id, registered_by, registered, statement FROM model_versions;
DROP TABLE model_versions;
ALTER TABLE model_versions_v14 RENAME TO model_versions;
CREATE UNIQUE INDEX model_versions_import_digest ON model_versions (name, digest)
    WHERE source = 'import';
)sql";

// Migration 15 (issue #31, backups): the admin role holds platform.backup, as new data
// directories give it.
constexpr std::string_view kSchemaV15 = R"sql(
INSERT OR IGNORE INTO role_permissions (role, permission)
    SELECT name, 'platform.backup' FROM roles WHERE name = 'admin' AND builtin = 1;
)sql";

// Migration 16 (issue #48, four eyes from duty classes): enrolment and reset codes expire (codes
// open at the upgrade work for seven days from it); a custom role that gives a separated duty
// waits for a second admin in `pending_roles` (its permissions sorted, one per line), and
// disabling or demoting one of two admins in `pending_admin_changes`.
constexpr std::string_view kSchemaV16 = R"sql(
ALTER TABLE users ADD COLUMN reset_code_expires INTEGER NOT NULL DEFAULT 0;
UPDATE users SET reset_code_expires = CAST(strftime('%s', 'now') AS INTEGER) + 604800
    WHERE reset_code_hash IS NOT NULL;
CREATE TABLE pending_roles (
    name TEXT PRIMARY KEY,
    permissions TEXT NOT NULL,
    requested_by INTEGER NOT NULL REFERENCES users(id),
    created INTEGER NOT NULL
);
CREATE TABLE pending_admin_changes (
    user_id INTEGER NOT NULL REFERENCES users(id),
    action TEXT NOT NULL,
    requested_by INTEGER NOT NULL REFERENCES users(id),
    created INTEGER NOT NULL,
    PRIMARY KEY (user_id, action)
);
)sql";

// Version 17: the control plane's starts (issue #49, change management): the release and the
// configuration digest each start ran with, so that the next start knows what changed.
constexpr std::string_view kSchemaV17 = R"sql(
CREATE TABLE platform_starts (
    id INTEGER PRIMARY KEY,
    version TEXT NOT NULL,
    config_sha256 TEXT NOT NULL,
    started INTEGER NOT NULL
);
)sql";

// Version 18: the witnesses the data directory keeps its audit heads with outside itself (issue
// #49): "file:/ABSOLUTE/PATH" or "tpm:0xINDEX[@TCTI]"; `base` is a TPM counter's value minus
// the heads the log had when it was attached (0 for a file).
constexpr std::string_view kSchemaV18 = R"sql(
CREATE TABLE audit_witnesses (
    location TEXT PRIMARY KEY,
    base INTEGER NOT NULL,
    attached INTEGER NOT NULL
);
)sql";

// Version 19 (issue #54): CPU jobs are charged CPU-hours as GPU jobs are charged GPU hours. The
// control plane measures them itself: the attempt's wall-clock time since `started` times
// `charged_cpus` (core::chargedCpus, fixed at dispatch), on top of `cpu_millihours_earlier`.
constexpr std::string_view kSchemaV19 = R"sql(
ALTER TABLE jobs ADD COLUMN cpu_millihours_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cpu_millihours_used INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cpu_millihours_earlier INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN charged_cpus INTEGER NOT NULL DEFAULT 0;
)sql";

}  // namespace

const std::vector<Migration>& migrations()
{
    static const std::vector<Migration> kMigrations{
        {1, kSchemaV1},   {2, kSchemaV2},   {3, kSchemaV3},   {4, kSchemaV4},   {5, kSchemaV5},
        {6, kSchemaV6},   {7, kSchemaV7},   {8, kSchemaV8},   {9, kSchemaV9},   {10, kSchemaV10},
        {11, kSchemaV11}, {12, kSchemaV12}, {13, kSchemaV13}, {14, kSchemaV14}, {15, kSchemaV15},
        {16, kSchemaV16}, {17, kSchemaV17}, {18, kSchemaV18}, {19, kSchemaV19}};
    return kMigrations;
}

}  // namespace sealtrain::core
