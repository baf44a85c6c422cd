// The control plane's SQLCipher database (docs/formats/database.md): opened with a raw 256-bit
// key derived from the keyring's `database` KEK, in WAL mode with foreign keys on, and brought to
// the newest schema by forward-only migrations, each in its own transaction.
//
// One Database is one connection and one writer. A Transaction is also the audit log's
// StoreTransaction, so an audit entry commits or rolls back with the change it records.
// run/query/queryOne/exists/queryInteger prepare, bind and step a statement in one call, so that
// the control plane's services read like the SQL they run.
#pragma once

#include "sealtrain/audit/store.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace sealtrain::core {

inline constexpr std::size_t kDatabaseKeySize = 32;

// HKDF-SHA-256 of the active `database` KEK with a fixed label: SQLCipher's raw key.
[[nodiscard]] Result<crypto::SecretBytes> deriveDatabaseKey(const crypto::Keyring& keyring);
// The same from one version of the `database` KEK (the one a database was keyed under before a
// rotation).
[[nodiscard]] Result<crypto::SecretBytes> deriveDatabaseKey(const crypto::Kek& kek);

// One schema step: `sql` runs inside a transaction that also records `version`.
struct Migration {
    int version = 0;
    std::string_view sql;
};

// Every migration, oldest first; versions are 1, 2, ... without gaps.
[[nodiscard]] const std::vector<Migration>& migrations();
[[nodiscard]] int latestSchemaVersion();

class Database;

// A value bound to one `?` of a statement: an integer, text, a blob or NULL. It refers to the
// caller's bytes (SQLite copies them when they are bound), so it lives only as long as the call
// that takes it, as in `database.run("… WHERE id = ?", {id})`.
class SqlValue final {
public:
    // Implicit on purpose: a list of arguments reads like the values it binds.
    SqlValue(std::int64_t value) noexcept  // NOLINT(google-explicit-constructor)
        : value_(value)
    {
    }
    SqlValue(int value) noexcept  // NOLINT(google-explicit-constructor)
        : value_(std::int64_t{value})
    {
    }
    SqlValue(std::string_view text) noexcept  // NOLINT(google-explicit-constructor)
        : value_(text)
    {
    }
    SqlValue(const std::string& text) noexcept  // NOLINT(google-explicit-constructor)
        : value_(std::string_view(text))
    {
    }
    SqlValue(const char* text) noexcept  // NOLINT(google-explicit-constructor)
        : value_(std::string_view(text))
    {
    }
    SqlValue(std::nullptr_t) noexcept  // NOLINT(google-explicit-constructor)
    {
    }
    // Bytes bound as a blob; an empty one stays a blob, not NULL.
    [[nodiscard]] static SqlValue blob(std::span<const std::uint8_t> bytes) noexcept
    {
        SqlValue value(nullptr);
        value.value_ = bytes;
        return value;
    }

private:
    friend class Statement;
    std::variant<std::monostate, std::int64_t, std::string_view, std::span<const std::uint8_t>>
        value_;
};

using SqlValues = std::initializer_list<SqlValue>;

// A prepared statement; binds are 1-based like SQLite's.
class Statement final {
public:
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, std::string_view text);
    Statement& bindBlob(int index, std::span<const std::uint8_t> bytes);
    Statement& bindNull(int index);
    // Binds `values` to ?1, ?2, … in order.
    Statement& bindAll(SqlValues values);

    // True when a row is ready, false when done; an error in one sentence otherwise.
    [[nodiscard]] Result<bool> step();
    // Runs to completion, expecting no rows.
    [[nodiscard]] Result<void> run();

    [[nodiscard]] std::int64_t integer(int column) const;
    [[nodiscard]] std::string text(int column) const;
    [[nodiscard]] std::vector<std::uint8_t> blob(int column) const;
    [[nodiscard]] bool isNull(int column) const;

private:
    friend class Database;
    Statement(sqlite3_stmt* statement, const Database& database)
        : statement_(statement)
        , database_(&database)
    {
    }
    sqlite3_stmt* statement_;
    const Database* database_;
};

// An open write transaction (BEGIN IMMEDIATE). Rolls back unless committed; the hooks that the
// audit log registers run after the outcome is final.
//
// Inside a group (Database::beginGroup, for group commit) a transaction is a SAVEPOINT of the
// group's: committing it releases the savepoint and hands its hooks to the group, which runs them
// once its own COMMIT has succeeded (or failed); rolling it back undoes its changes alone. When a
// savepoint can not be released or rolled back cleanly the group is poisoned: it can then only
// roll back, so that nothing is committed in a state nobody checked.
class Transaction final : public audit::StoreTransaction {
public:
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction() override;

    void onCommit(std::function<void()> action) override;
    void onRollback(std::function<void()> action) override;

    // On failure the transaction has been rolled back (and the rollback hooks have run).
    [[nodiscard]] Result<void> commit();
    void rollback() noexcept;

    [[nodiscard]] bool open() const noexcept { return !finished_; }
    [[nodiscard]] Database& database() const noexcept { return database_; }
    // The transaction whose COMMIT makes this one durable: the group's for a savepoint, else
    // this one. The audit log appends to it, so that its entries join the tree only then.
    [[nodiscard]] Transaction& outermost() noexcept { return group_ != nullptr ? *group_ : *this; }

private:
    friend class Database;
    Transaction(Database& database, Transaction* group)
        : database_(database)
        , group_(group)
    {
    }
    [[nodiscard]] Result<void> release();
    void rollbackSavepoint() noexcept;

    Database& database_;
    Transaction* group_;  // the group this savepoint belongs to; null for a transaction of its own
    std::vector<std::function<void()>> commitActions_;
    std::vector<std::function<void()>> rollbackActions_;
    bool finished_ = false;
    bool poisoned_ = false;  // a group that may only roll back
};

struct DatabaseOptions {
    // Migrate up to this version only (tests that start from an older schema); newest when unset.
    std::optional<int> schemaVersion;
    std::chrono::milliseconds busyTimeout{5000};
};

// Called with a statement positioned on a row, to read its columns.
using RowCallback = std::function<void(const Statement& row)>;

class Database final {
public:
    // Opens or creates the file. A wrong key is Unauthenticated, a file that is not a Sealtrain
    // database is Integrity, a schema newer than this build knows is Unsupported.
    [[nodiscard]] static Result<std::unique_ptr<Database>> open(const std::filesystem::path& path,
                                                                const crypto::SecretBytes& key,
                                                                DatabaseOptions options = {});

    // Opens with the key from the keyring's active `database` KEK. When a rotation of that KEK
    // stopped before the database was re-keyed, the newest older version that still opens it is
    // used and the database is re-keyed to the active version there and then; so after
    // `keyring rotate database` this is also the re-key step.
    [[nodiscard]] static Result<std::unique_ptr<Database>>
    openWithKeyring(const std::filesystem::path& path, const crypto::Keyring& keyring,
                    DatabaseOptions options = {});

    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // One write transaction at a time; while a group is open (and no savepoint of it), a
    // savepoint inside the group.
    [[nodiscard]] Result<std::unique_ptr<Transaction>> begin();
    // A group transaction (BEGIN IMMEDIATE) in which every begin() until it finishes is a
    // savepoint: many calls, each rolled back on its own failure, share one durable COMMIT.
    [[nodiscard]] Result<std::unique_ptr<Transaction>> beginGroup();
    [[nodiscard]] bool inTransaction() const noexcept { return current_ != nullptr; }

    [[nodiscard]] Result<Statement> prepare(std::string_view sql) const;
    // Prepares `sql`, binds `arguments` to its ?s in order and runs it to the end.
    [[nodiscard]] Result<void> run(std::string_view sql, SqlValues arguments = {}) const;
    // The same, calling `onRow` for every row the statement returns.
    [[nodiscard]] Result<void> query(std::string_view sql, SqlValues arguments,
                                     const RowCallback& onRow) const;
    // The same for the first row only; false when there is none.
    [[nodiscard]] Result<bool> queryOne(std::string_view sql, SqlValues arguments,
                                        const RowCallback& onRow) const;
    // Whether the statement returns any row.
    [[nodiscard]] Result<bool> exists(std::string_view sql, SqlValues arguments) const;
    // The first column of the first row, as for `SELECT count(*) …`; 0 when there is no row.
    [[nodiscard]] Result<std::int64_t> queryInteger(std::string_view sql,
                                                    SqlValues arguments) const;
    // Runs statements without parameters or results.
    [[nodiscard]] Result<void> execute(const std::string& sql) const;
    [[nodiscard]] Result<int> schemaVersion() const;
    // Applies the migrations after the current version up to `target`.
    [[nodiscard]] Result<void> migrate(int target);
    // The schema versions this connection's open migrated from and to (from 0: a new database),
    // handed over once (ControlPlane::open audits it as platform.migrate); nullopt when it applied
    // none or it was taken.
    struct MigrationRun {
        int from = 0;
        int to = 0;
    };
    [[nodiscard]] std::optional<MigrationRun> takeMigrationRun() noexcept
    {
        return std::exchange(migratedOnOpen_, std::nullopt);
    }
    // Re-encrypts every page under `newKey` (PRAGMA rekey with a raw key), in place; the
    // connection goes on with the new key. For a rotation of the `database` KEK.
    [[nodiscard]] Result<void> rekey(const crypto::SecretBytes& newKey);
    // A consistent copy of the whole database in a new file at `path`, encrypted under `key`
    // (the key this connection was opened with), through SQLite's online backup API; refused
    // inside a transaction. For `sealtrainctl backup` (core/backup/backup.h): the copy is never in
    // the clear on disk.
    [[nodiscard]] Result<void> snapshotTo(const std::filesystem::path& path,
                                          const crypto::SecretBytes& key) const;

    // One sentence for the connection's last error, with `what` as its subject.
    [[nodiscard]] Error lastError(const std::string& what) const;
    [[nodiscard]] std::int64_t lastInsertId() const;
    [[nodiscard]] int changes() const;

private:
    friend class Transaction;
    explicit Database(sqlite3* handle)
        : handle_(handle)
    {
    }
    // The innermost open transaction is now `transaction`'s group, or none.
    void finish(Transaction& transaction) noexcept
    {
        current_ = transaction.group_;
        if (current_ == nullptr)
            group_ = nullptr;
    }

    sqlite3* handle_;
    Transaction* current_ = nullptr;
    Transaction* group_ = nullptr;
    std::optional<MigrationRun> migratedOnOpen_;
};

}  // namespace sealtrain::core
