// The SQLCipher connection, its key, its transactions, and applying the migrations
// (core/store/migrations.cpp holds their SQL).
#include "sealtrain/core/store/database.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/version.h"
#include "sealtrain/crypto/hkdf.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstring>
#include <type_traits>

namespace sealtrain::core {
namespace {

constexpr std::string_view kKeyLabel = "sealtrain database key v1";

int checkedResult(int rc)
{
    return rc & 0xff;  // primary result code
}

// `PRAGMA <pragma> = "x'<64 hex digits>'";` selects a raw key: no PBKDF2 inside SQLCipher. The
// statement text holds the key, so it is built in guarded memory (with its C string terminator)
// and the caller wipes it after use.
Result<crypto::SecretBytes> rawKeyPragma(std::string_view pragma, const crypto::SecretBytes& key)
{
    const std::string prefix = "PRAGMA " + std::string(pragma) + " = \"x'";
    constexpr std::string_view kSuffix = "'\";";
    auto statement =
        crypto::SecretBytes::allocate(prefix.size() + 2 * key.size() + kSuffix.size() + 1);
    if (!statement)
        return statement.error();
    auto out = statement->mutableBytes();
    std::size_t at = 0;
    std::memcpy(out.data(), prefix.data(), prefix.size());
    at += prefix.size();
    static constexpr char kHex[] = "0123456789abcdef";
    for (const std::uint8_t byte : key.bytes()) {
        out[at++] = static_cast<std::uint8_t>(kHex[byte >> 4U]);
        out[at++] = static_cast<std::uint8_t>(kHex[byte & 0x0fU]);
    }
    std::memcpy(out.data() + at, kSuffix.data(), kSuffix.size());
    // The last byte stays zero: the C string's terminator.
    return statement;
}

}  // namespace

Result<crypto::SecretBytes> deriveDatabaseKey(const crypto::Keyring& keyring)
{
    auto kek = keyring.activeKek("database");
    if (!kek)
        return kek.error().withContext("Cannot derive the database key");
    return deriveDatabaseKey(**kek);
}

Result<crypto::SecretBytes> deriveDatabaseKey(const crypto::Kek& kek)
{
    return crypto::hkdf(crypto::HkdfHash::Sha256, kek.key.bytes(), {}, asBytes(kKeyLabel),
                        kDatabaseKeySize);
}

int latestSchemaVersion()
{
    return migrations().back().version;
}

// --- Statement ---------------------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : statement_(std::exchange(other.statement_, nullptr))
    , database_(other.database_)
{
}

Statement::~Statement()
{
    sqlite3_finalize(statement_);
}

Statement& Statement::bind(int index, std::int64_t value)
{
    sqlite3_bind_int64(statement_, index, value);
    return *this;
}

Statement& Statement::bind(int index, std::string_view text)
{
    sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bindBlob(int index, std::span<const std::uint8_t> bytes)
{
    // A zero-length blob must still be a blob, not NULL: give SQLite a valid pointer.
    static constexpr std::uint8_t kEmpty = 0;
    sqlite3_bind_blob(statement_, index, bytes.empty() ? &kEmpty : bytes.data(),
                      static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bindNull(int index)
{
    sqlite3_bind_null(statement_, index);
    return *this;
}

Statement& Statement::bindAll(SqlValues values)
{
    int index = 1;
    for (const SqlValue& value : values) {
        std::visit(
            [&](const auto& v) {
                using V = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<V, std::monostate>)
                    bindNull(index);
                else if constexpr (std::is_same_v<V, std::span<const std::uint8_t>>)
                    bindBlob(index, v);
                else
                    bind(index, v);
            },
            value.value_);
        ++index;
    }
    return *this;
}

Result<bool> Statement::step()
{
    const int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    return database_->lastError("A database statement");
}

Result<void> Statement::run()
{
    for (;;) {
        auto row = step();
        if (!row)
            return row.error();
        if (!*row)
            return success();
    }
}

std::int64_t Statement::integer(int column) const
{
    return sqlite3_column_int64(statement_, column);
}

std::string Statement::text(int column) const
{
    const auto* text = sqlite3_column_text(statement_, column);
    if (text == nullptr)
        return {};
    return {reinterpret_cast<const char*>(text),
            static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))};
}

std::vector<std::uint8_t> Statement::blob(int column) const
{
    const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(statement_, column));
    const auto size = static_cast<std::size_t>(sqlite3_column_bytes(statement_, column));
    if (data == nullptr)
        return {};
    return {data, data + size};
}

bool Statement::isNull(int column) const
{
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

// --- Transaction -------------------------------------------------------------------------------

Transaction::~Transaction()
{
    rollback();
}

void Transaction::onCommit(std::function<void()> action)
{
    commitActions_.push_back(std::move(action));
}

void Transaction::onRollback(std::function<void()> action)
{
    rollbackActions_.push_back(std::move(action));
}

Result<void> Transaction::commit()
{
    if (finished_)
        return Error(ErrorCode::Internal, "The transaction was already finished; begin a new one.");
    if (group_ != nullptr)
        return release();
    if (poisoned_) {
        rollback();
        return Error(ErrorCode::Io, "The changes were not committed because one of the calls "
                                    "sharing their transaction left it in an unknown state; try "
                                    "again.");
    }
    if (auto done = database_.execute("COMMIT"); !done) {
        rollback();
        return done.error();
    }
    finished_ = true;
    database_.finish(*this);
    auto actions = std::move(commitActions_);
    rollbackActions_.clear();
    for (auto& action : actions)
        action();
    return success();
}

Result<void> Transaction::release()
{
    // RELEASE fails when the group's transaction is gone (SQLite rolls a whole transaction back
    // on some errors, such as a full disk): then so is the group.
    if (auto done = database_.execute("RELEASE call"); !done) {
        group_->poisoned_ = true;
        rollbackSavepoint();
        return done.error();
    }
    finished_ = true;
    database_.finish(*this);
    for (auto& action : commitActions_)
        group_->commitActions_.push_back(std::move(action));
    for (auto& action : rollbackActions_)
        group_->rollbackActions_.push_back(std::move(action));
    commitActions_.clear();
    rollbackActions_.clear();
    return success();
}

void Transaction::rollbackSavepoint() noexcept
{
    finished_ = true;
    if (!database_.execute("ROLLBACK TO call") || !database_.execute("RELEASE call"))
        group_->poisoned_ = true;
    database_.finish(*this);
    auto actions = std::move(rollbackActions_);
    commitActions_.clear();
    for (auto& action : actions)
        action();
}

void Transaction::rollback() noexcept
{
    if (finished_)
        return;
    if (group_ != nullptr) {
        rollbackSavepoint();
        return;
    }
    finished_ = true;
    // Nothing useful can be done when ROLLBACK itself fails: SQLite then has already rolled
    // back (or the connection is gone), and the hooks must still learn the outcome.
    (void)database_.execute("ROLLBACK");
    database_.finish(*this);
    auto actions = std::move(rollbackActions_);
    commitActions_.clear();
    for (auto& action : actions)
        action();
}

// --- Database ----------------------------------------------------------------------------------

Result<std::unique_ptr<Database>> Database::open(const std::filesystem::path& path,
                                                 const crypto::SecretBytes& key,
                                                 DatabaseOptions options)
{
    if (key.size() != kDatabaseKeySize)
        return Error(ErrorCode::InvalidArgument,
                     "The database key must be 32 bytes; derive it from the keyring.");
    sqlite3* handle = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &handle,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    std::unique_ptr<Database> database(new Database(handle));
    if (rc != SQLITE_OK)
        return Error(ErrorCode::Io, "Cannot open the database '" + path.string()
                                        + "': " + sqlite3_errstr(rc)
                                        + "; check the data directory's permissions.");

    auto statement = rawKeyPragma("key", key);
    if (!statement)
        return statement.error();
    const int keyed = sqlite3_exec(handle, reinterpret_cast<const char*>(statement->bytes().data()),
                                   nullptr, nullptr, nullptr);
    statement->wipe();
    if (keyed != SQLITE_OK)
        return Error(ErrorCode::Internal,
                     "SQLCipher refused the database key; check that the SQLCipher library is "
                     "installed.");

    // SQLCipher 3.4 only notices a wrong key on the first read, so read now.
    if (auto readable = database->exists("SELECT count(*) FROM sqlite_master", {}); !readable) {
        if (checkedResult(sqlite3_errcode(handle)) == SQLITE_NOTADB)
            return Error(ErrorCode::Unauthenticated,
                         "The database '" + path.string()
                             + "' can not be decrypted: the passphrase or key is wrong, or the "
                               "file is not a Sealtrain database.");
        return readable.error();
    }

    sqlite3_busy_timeout(handle, static_cast<int>(options.busyTimeout.count()));
    SEALTRAIN_TRY(database->execute("PRAGMA journal_mode = WAL"));
    SEALTRAIN_TRY(database->execute("PRAGMA synchronous = FULL"));
    SEALTRAIN_TRY(database->execute("PRAGMA foreign_keys = ON"));
    SEALTRAIN_TRY(database->execute("CREATE TABLE IF NOT EXISTS schema_version ("
                                    "version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)"));
    const int target = options.schemaVersion.value_or(latestSchemaVersion());
    auto current = database->schemaVersion();
    if (!current)
        return current.error();
    if (*current > latestSchemaVersion())
        return Error(ErrorCode::Unsupported,
                     fmt::format("The database has schema version {}, newer than Sealtrain {} "
                                 "knows ({}); reinstall the release that wrote it, as downgrades "
                                 "are not supported.",
                                 *current, kVersion, latestSchemaVersion()));
    SEALTRAIN_TRY(database->migrate(target));
    return database;
}

Result<std::unique_ptr<Database>> Database::openWithKeyring(const std::filesystem::path& path,
                                                            const crypto::Keyring& keyring,
                                                            DatabaseOptions options)
{
    auto active = keyring.activeKek("database");
    if (!active)
        return active.error().withContext("Cannot derive the database key");
    auto key = deriveDatabaseKey(**active);
    if (!key)
        return key.error();
    auto database = open(path, *key, options);
    if (database || database.error().code() != ErrorCode::Unauthenticated)
        return database;
    for (std::uint32_t version = (*active)->version - 1; version >= 1; --version) {
        auto older = keyring.findKek("database", version);
        if (!older)
            continue;  // retired: its key is gone
        auto olderKey = deriveDatabaseKey(**older);
        if (!olderKey)
            return olderKey.error();
        auto reopened = open(path, *olderKey, options);
        if (!reopened)
            continue;
        SEALTRAIN_TRY((*reopened)->rekey(*key));
        return reopened;
    }
    return database;
}

Result<void> Database::rekey(const crypto::SecretBytes& newKey)
{
    if (newKey.size() != kDatabaseKeySize)
        return Error(ErrorCode::InvalidArgument,
                     "The database key must be 32 bytes; derive it from the keyring.");
    if (current_ != nullptr)
        return Error(ErrorCode::Internal,
                     "The database can not be re-keyed inside a transaction; commit it first.");
    auto statement = rawKeyPragma("rekey", newKey);
    if (!statement)
        return statement.error();
    const int rc = sqlite3_exec(handle_, reinterpret_cast<const char*>(statement->bytes().data()),
                                nullptr, nullptr, nullptr);
    statement->wipe();
    if (rc != SQLITE_OK)
        return lastError("Re-keying the database");
    return success();
}

Result<void> Database::snapshotTo(const std::filesystem::path& path,
                                  const crypto::SecretBytes& key) const
{
    if (current_ != nullptr)
        return Error(ErrorCode::Internal,
                     "The database can not be copied inside a transaction; commit it first.");
    sqlite3* copy = nullptr;
    const int opened =
        sqlite3_open_v2(path.c_str(), &copy,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    const std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(copy, sqlite3_close_v2);
    if (opened != SQLITE_OK)
        return Error(ErrorCode::Io, "Cannot create the database copy '" + path.string()
                                        + "': " + sqlite3_errstr(opened)
                                        + "; check that its folder is writable.");
    auto statement = rawKeyPragma("key", key);
    if (!statement)
        return statement.error();
    const int keyed = sqlite3_exec(copy, reinterpret_cast<const char*>(statement->bytes().data()),
                                   nullptr, nullptr, nullptr);
    statement->wipe();
    if (keyed != SQLITE_OK)
        return Error(ErrorCode::Internal, "SQLCipher refused the key of the database copy; check "
                                          "that the SQLCipher library is installed.");
    sqlite3_backup* backup = sqlite3_backup_init(copy, "main", handle_, "main");
    if (backup == nullptr)
        return Error(ErrorCode::Internal,
                     "Cannot start copying the database: " + asClause(sqlite3_errmsg(copy))
                         + "; check the SQLCipher library.");
    const int stepped = sqlite3_backup_step(backup, -1);
    const int finished = sqlite3_backup_finish(backup);
    if (stepped != SQLITE_DONE || finished != SQLITE_OK)
        return Error(ErrorCode::Io,
                     "Copying the database failed: "
                         + std::string(sqlite3_errstr(stepped == SQLITE_DONE ? finished : stepped))
                         + "; check the free space and try again.");
    return success();
}

Database::~Database()
{
    sqlite3_close_v2(handle_);
}

Result<std::unique_ptr<Transaction>> Database::begin()
{
    if (current_ != nullptr && current_ == group_) {
        // A savepoint needs the group's transaction to be still open: SAVEPOINT outside one
        // would begin (and RELEASE commit) a transaction of its own.
        if (group_->poisoned_ || sqlite3_get_autocommit(handle_) != 0) {
            group_->poisoned_ = true;
            return Error(ErrorCode::Io, "The call was not made because an earlier call left the "
                                        "transaction it shares unusable; try again.");
        }
        SEALTRAIN_TRY(execute("SAVEPOINT call"));
        std::unique_ptr<Transaction> savepoint(new Transaction(*this, group_));
        current_ = savepoint.get();
        return savepoint;
    }
    if (current_ != nullptr)
        return Error(ErrorCode::Internal,
                     "A database transaction is already open; finish it before beginning "
                     "another.");
    SEALTRAIN_TRY(execute("BEGIN IMMEDIATE"));
    std::unique_ptr<Transaction> transaction(new Transaction(*this, nullptr));
    current_ = transaction.get();
    return transaction;
}

Result<std::unique_ptr<Transaction>> Database::beginGroup()
{
    auto group = begin();
    if (group)
        group_ = group->get();
    return group;
}

Result<Statement> Database::prepare(std::string_view sql) const
{
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(handle_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr)
        != SQLITE_OK) {
        sqlite3_finalize(statement);
        return lastError("Preparing a database statement");
    }
    return Statement(statement, *this);
}

Result<void> Database::run(std::string_view sql, SqlValues arguments) const
{
    auto statement = prepare(sql);
    if (!statement)
        return statement.error();
    return statement->bindAll(arguments).run();
}

Result<void> Database::query(std::string_view sql, SqlValues arguments,
                             const RowCallback& onRow) const
{
    auto statement = prepare(sql);
    if (!statement)
        return statement.error();
    statement->bindAll(arguments);
    for (;;) {
        auto row = statement->step();
        if (!row)
            return row.error();
        if (!*row)
            return success();
        onRow(*statement);
    }
}

Result<bool> Database::queryOne(std::string_view sql, SqlValues arguments,
                                const RowCallback& onRow) const
{
    auto statement = prepare(sql);
    if (!statement)
        return statement.error();
    auto row = statement->bindAll(arguments).step();
    if (row && *row)
        onRow(*statement);
    return row;
}

Result<bool> Database::exists(std::string_view sql, SqlValues arguments) const
{
    return queryOne(sql, arguments, [](const Statement&) {});
}

Result<std::int64_t> Database::queryInteger(std::string_view sql, SqlValues arguments) const
{
    std::int64_t value = 0;
    auto row =
        queryOne(sql, arguments, [&](const Statement& statement) { value = statement.integer(0); });
    if (!row)
        return row.error();
    return value;
}

Result<void> Database::execute(const std::string& sql) const
{
    if (sqlite3_exec(handle_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
        return lastError("A database command");
    return success();
}

Result<int> Database::schemaVersion() const
{
    auto version = queryInteger("SELECT coalesce(max(version), 0) FROM schema_version", {});
    if (!version)
        return version.error();
    return static_cast<int>(*version);
}

Result<void> Database::migrate(int target)
{
    auto current = schemaVersion();
    if (!current)
        return current.error();
    for (const auto& migration : migrations()) {
        if (migration.version <= *current || migration.version > target)
            continue;
        // A migration may rebuild a table that others reference (SQLite's way to change a
        // column's constraints): foreign keys are off while it runs, outside its transaction as
        // SQLite requires, and every reference must hold again before it commits.
        SEALTRAIN_TRY(execute("PRAGMA foreign_keys = OFF"));
        auto transaction = begin();
        if (!transaction)
            return transaction.error();
        SEALTRAIN_TRY(execute(std::string(migration.sql)));
        auto dangling = exists("PRAGMA foreign_key_check", {});
        if (!dangling)
            return dangling.error();
        if (*dangling)
            return Error(ErrorCode::Integrity,
                         "Schema migration " + std::to_string(migration.version)
                             + " would leave rows that refer to missing ones; restore the "
                               "database from a backup.");
        SEALTRAIN_TRY(run("INSERT INTO schema_version (version, applied) "
                          "VALUES (?, strftime('%s', 'now'))",
                          {migration.version}));
        SEALTRAIN_TRY((*transaction)->commit());
        SEALTRAIN_TRY(execute("PRAGMA foreign_keys = ON"));
        if (!migratedOnOpen_)
            migratedOnOpen_ = MigrationRun{*current, migration.version};
        migratedOnOpen_->to = migration.version;
    }
    return success();
}

Error Database::lastError(const std::string& what) const
{
    const int code = checkedResult(sqlite3_errcode(handle_));
    const std::string detail = asClause(sqlite3_errmsg(handle_));
    ErrorCode kind = ErrorCode::Io;
    std::string advice = "check the disk and the data directory.";
    switch (code) {
    case SQLITE_CONSTRAINT:
        kind = ErrorCode::AlreadyExists;
        advice = "choose another name or remove the conflicting record first.";
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        kind = ErrorCode::ResourceExhausted;
        advice = "another process holds the database; try again.";
        break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        kind = ErrorCode::Integrity;
        advice = "restore the database from a backup.";
        break;
    case SQLITE_FULL:
        kind = ErrorCode::ResourceExhausted;
        advice = "free disk space.";
        break;
    case SQLITE_ERROR:
        kind = ErrorCode::Internal;
        advice = "report this as a bug.";
        break;
    default: break;
    }
    return Error(kind, what + " failed (" + detail + "); " + advice);
}

std::int64_t Database::lastInsertId() const
{
    return sqlite3_last_insert_rowid(handle_);
}

int Database::changes() const
{
    return sqlite3_changes(handle_);
}

}  // namespace sealtrain::core
