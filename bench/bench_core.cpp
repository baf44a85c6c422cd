// What the audit costs the control plane, in one run (docs/performance.md):
//   plain     one INSERT per transaction into the SQLCipher database, durable commits (WAL,
//             synchronous=FULL, the store's settings): the ceiling
//   audited   one audited mutation per transaction through the service layer (role.create: session
//             check, permission check, the change, its audit entry, a signed head every 1000
//             entries), durable commits
// The two run interleaved in rounds on the same disk so that a shared machine's noise falls on
// both; rates are per wall-clock second, since commits wait on fsync. Goal: audited >= plain / 2.
// Usage: bench_core [MUTATIONS] [DIR]   (default 2000, in the system's temporary folder)
#include "bench_support.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/identity/totp.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/sql_audit_store.h"
#include "sealtrain/crypto/random.h"

#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

using namespace sealtrain;
using bench::check;
using bench::take;

namespace {

using WallClock = std::chrono::steady_clock;
constexpr int kRounds = 5;

}  // namespace

int main(int argc, char** argv)
{
    const int mutations = argc > 1 ? static_cast<int>(std::strtol(argv[1], nullptr, 10)) : 2000;
    const std::filesystem::path base =
        argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path();
    if (mutations < kRounds) {
        fmt::print(stderr, "bench_core: MUTATIONS must be at least {}.\n", kRounds);
        return 2;
    }
    const auto dir = base / fmt::format("bench_core-{}", ::getpid());
    std::filesystem::create_directories(dir);
    const auto key = take(crypto::SecretBytes::random(core::kDatabaseKeySize));

    // The ceiling's database: the same store settings, one table.
    auto plainDb = take(core::Database::open(dir / "plain.db", key));
    check(plainDb->execute("CREATE TABLE plain (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                           "value BLOB NOT NULL)"));

    // The control plane with a signed-in admin (Argon2id at its floor: sign-in is not measured).
    auto database = take(core::Database::open(dir / "control.db", key));
    core::SqlAuditStore store(*database);
    const auto signingKey = take(crypto::SigningKey::generate());
    audit::SystemClock clock;
    auto plane = take(core::ControlPlane::open(*database, store, signingKey, nullptr, clock));
    const auto password = take(crypto::SecretBytes::random(24));
    (void)take(plane->identity().init("bench", password));
    // The TOTP secret an authenticator app would hold, read back from the database.
    auto secretRow = take(database->prepare("SELECT totp_secret FROM users WHERE name = 'bench'"));
    (void)take(secretRow.step());
    const auto secret = take(crypto::SecretBytes::fromBytes(secretRow.blob(0)));
    const auto session = take(plane->identity().signIn(
        "bench", password, core::totpCode(secret, core::totpStep(clock.now()))));

    const auto payload = crypto::randomBytes(64);
    WallClock::duration plainTime{};
    WallClock::duration auditedTime{};
    const int perRound = mutations / kRounds;
    int done = 0;
    for (int round = 0; round < kRounds; ++round) {
        auto start = WallClock::now();
        for (int i = 0; i < perRound; ++i) {
            auto transaction = take(plainDb->begin());
            auto insert = take(plainDb->prepare("INSERT INTO plain (name, value) VALUES (?, ?)"));
            insert.bind(1, fmt::format("row-{}", done + i)).bindBlob(2, payload);
            check(insert.run());
            check(transaction->commit());
        }
        plainTime += WallClock::now() - start;
        start = WallClock::now();
        for (int i = 0; i < perRound; ++i)
            (void)take(plane->access().createRole(session, fmt::format("role-{}", done + i),
                                                  {"audit.read"}));
        auditedTime += WallClock::now() - start;
        done += perRound;
    }
    const double plainRate = done / std::chrono::duration<double>(plainTime).count();
    const double auditedRate = done / std::chrono::duration<double>(auditedTime).count();
    fmt::print("bench_core: {} durable commits each, {} interleaved rounds, in {}\n", done, kRounds,
               dir.string());
    fmt::print("  plain SQLCipher inserts:   {:>9.0f} /s  (ceiling)\n", plainRate);
    fmt::print("  audited mutations:         {:>9.0f} /s  (role.create with its audit entry)\n",
               auditedRate);
    fmt::print("  audited / plain:           {:>9.2f}     (goal: at least 0.50)\n",
               auditedRate / plainRate);
    fmt::print("  audit entries: {}, signed heads: {}\n", plane->auditLog().size(),
               take(store.readHeads()).size());
    plane.reset();
    database.reset();
    plainDb.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return 0;
}
