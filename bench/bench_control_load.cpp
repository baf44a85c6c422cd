// What one sealtrain-control sustains on loopback, beside what its disk allows, in one run
// (docs/operations/limits.md):
//   plain, one row per commit  one INSERT per durable transaction into a SQLCipher database with
//                              the store's settings (WAL, synchronous=FULL): the ceiling of one
//                              fsync per call
//   plain, batched             the same rows, kBatch per durable transaction: the ceiling when
//                              calls share commits
//   audited mutations          Access.GrantRole / RevokeRole through the client library over TLS
//                              1.3 on 127.0.0.1, at 1, 8 and 32 concurrent clients, each its own
//                              signed-in admin on its own channel (session check, permission
//                              check, the change and its audit entry, durable): calls/s, p50, p99.
//                              With 34 admins every grant is a request that waits for a second
//                              admin (grant.request) and the revocation withdraws it: each call
//                              still writes its row and its entry in one durable transaction
//   reads                      Sessions.WhoAmI at 32 clients: the session check, with reads alone
//                              (its use is written once a minute), in the group commit
//   no database                Platform.GetSigningKeys at 32 clients, which touches no database
//                              and no group: what TLS, gRPC and the clients cost on this machine
// The server runs in this process (api::ControlServer over a new data directory). Every phase is
// bounded in calls and in seconds; rates are per wall-clock second, since commits wait on fsync.
// Goals (issue #15): audited >= 1000/s at 32 clients, reads >= 5000/s, p99 <= 100 ms.
// Usage: bench_control_load [SECONDS-PER-PHASE] [DIR] [SESSION-USE-INTERVAL]   (default 3, the
// system's temporary folder, 60 s as the daemon; 0 writes a session's use on every call, as
// before b0afefd)
#include "control_bench.h"
#include "sealtrain/crypto/random.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace sealtrain;
using bench::check;
using bench::take;

namespace {

using WallClock = std::chrono::steady_clock;
constexpr int kMaxClients = 32;
constexpr int kBatch = 32;
constexpr int kMaxCallsPerPhase = 20000;

struct Phase {
    double perSecond = 0;
    double p50Ms = 0;
    double p99Ms = 0;
    std::size_t calls = 0;
};

// `clients` threads call `call(client, i)` until kMaxCallsPerPhase calls or `seconds` passed.
template <typename Call>
Phase measure(int clients, std::chrono::seconds seconds, const Call& call)
{
    std::atomic<int> budget = kMaxCallsPerPhase;
    std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
    const auto start = WallClock::now();
    const auto end = start + seconds;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(clients));
    for (int client = 0; client < clients; ++client)
        threads.emplace_back([&, client] {
            auto& mine = latencies[static_cast<std::size_t>(client)];
            for (int i = 0; budget.fetch_sub(1) > 0 && WallClock::now() < end; ++i) {
                const auto before = WallClock::now();
                check(call(client, i));
                mine.push_back(
                    std::chrono::duration<double, std::milli>(WallClock::now() - before).count());
            }
        });
    for (auto& thread : threads)
        thread.join();
    const double elapsed = std::chrono::duration<double>(WallClock::now() - start).count();
    std::vector<double> all;
    for (const auto& mine : latencies)
        all.insert(all.end(), mine.begin(), mine.end());
    const bench::Percentiles spread = bench::percentiles(std::move(all));
    Phase phase;
    phase.calls = spread.count;
    phase.perSecond = static_cast<double>(spread.count) / elapsed;
    phase.p50Ms = spread.p50Ms;
    phase.p99Ms = spread.p99Ms;
    return phase;
}

// Durable inserts into a database with the store's settings: one row per commit, or kBatch.
double plainInserts(const std::filesystem::path& file, int rowsPerCommit,
                    std::chrono::seconds seconds)
{
    const auto key = take(crypto::SecretBytes::random(core::kDatabaseKeySize));
    auto database = take(core::Database::open(file, key));
    check(database->execute(
        "CREATE TABLE plain (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value BLOB NOT NULL)"));
    const auto payload = crypto::randomBytes(200);  // about an audit entry's size
    const auto start = WallClock::now();
    int rows = 0;
    while (rows < kMaxCallsPerPhase && WallClock::now() < start + seconds) {
        auto transaction = take(database->begin());
        for (int i = 0; i < rowsPerCommit; ++i, ++rows)
            check(database->run("INSERT INTO plain (name, value) VALUES (?, ?)",
                                {fmt::format("row-{}", rows), core::SqlValue::blob(payload)}));
        check(transaction->commit());
    }
    return rows / std::chrono::duration<double>(WallClock::now() - start).count();
}

std::string userName(int client)
{
    return fmt::format("admin{:02}", client);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
        fmt::print("Usage: bench_control_load [SECONDS-PER-PHASE] [DIR] [SESSION-USE-INTERVAL]\n"
                   "  SECONDS-PER-PHASE     1 to 60, default 3 (each phase also stops at {} "
                   "calls)\n"
                   "  DIR                   where its data directory goes, default the system's "
                   "temporary folder\n"
                   "  SESSION-USE-INTERVAL  seconds between writes of a session's last use, "
                   "default 60 as in the daemon; 0 writes it on every call\n",
                   kMaxCallsPerPhase);
        return 0;
    }
    const std::chrono::seconds seconds{argc > 1 ? std::strtol(argv[1], nullptr, 10) : 3};
    const std::filesystem::path base =
        argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path();
    if (seconds.count() < 1 || seconds.count() > 60) {
        fmt::print(stderr, "bench_control_load: SECONDS-PER-PHASE must be 1 to 60.\n");
        return 2;
    }
    core::DataDirectoryOptions openOptions;
    if (argc > 3)
        openOptions.controlPlane.sessionUseInterval =
            std::chrono::seconds{std::strtol(argv[3], nullptr, 10)};
    const auto dir = base / fmt::format("bench_control_load-{}", ::getpid());
    bench::prepareBenchFolder(dir);

    const double oneRow = plainInserts(dir / "plain-one.db", 1, seconds);
    const double batched = plainInserts(dir / "plain-batched.db", kBatch, seconds);

    // The data directory: alice, a second admin who confirms the others' grants (and never signs
    // in over the network, so that no TOTP code is used twice), then one admin per client.
    bench::InProcessControl control(dir, openOptions);
    control.addUser("target", {});
    control.addUser("second-admin", {"admin"});
    for (int client = 0; client < kMaxClients; ++client)
        control.addUser(userName(client), {"admin"});
    control.serve({});
    std::vector<std::unique_ptr<api::ControlClient>> clients;
    clients.reserve(kMaxClients);
    for (int client = 0; client < kMaxClients; ++client)
        clients.push_back(control.signIn(userName(client)));

    // Each client grants and revokes the role in a project of its own, so calls never conflict.
    std::vector<char> granted(kMaxClients, 0);  // one byte each: the clients write concurrently
    const auto mutate = [&](int client, int) {
        const std::string project = fmt::format("p{}", client);
        auto& api = *clients[static_cast<std::size_t>(client)];
        Result<void> done = success();
        if (granted[static_cast<std::size_t>(client)]) {
            if (auto revoked = api.access().revokeRole("target", "engineer", project); !revoked)
                done = revoked.error();
        } else if (auto made = api.access().grantRole("target", "engineer", project); !made) {
            done = made.error();
        }
        granted[static_cast<std::size_t>(client)] ^= 1;
        return done;
    };
    std::vector<std::pair<int, Phase>> mutations;
    for (const int count : {1, 8, 32})
        mutations.emplace_back(count, measure(count, seconds, mutate));
    const Phase reads = measure(kMaxClients, seconds, [&](int client, int) -> Result<void> {
        auto who = clients[static_cast<std::size_t>(client)]->sessions().whoAmI();
        return who ? success() : Result<void>(who.error());
    });
    const Phase transport = measure(kMaxClients, seconds, [&](int client, int) -> Result<void> {
        auto keys = clients[static_cast<std::size_t>(client)]->platform().signingKeys();
        return keys ? success() : Result<void>(keys.error());
    });

    fmt::print("bench_control_load: sealtrain-control in-process on 127.0.0.1 (TLS 1.3), {} s or "
               "{} calls per phase, {} hardware threads, a session's use written every {} s, in "
               "{}\n",
               seconds.count(), kMaxCallsPerPhase, std::thread::hardware_concurrency(),
               openOptions.controlPlane.sessionUseInterval.count(), dir.string());
    fmt::print("  plain SQLCipher, 1 row per durable commit:  {:>8.0f} rows/s  (ceiling, one "
               "fsync per call)\n",
               oneRow);
    fmt::print("  plain SQLCipher, {} rows per durable commit: {:>8.0f} rows/s  (ceiling, shared "
               "commits)\n",
               kBatch, batched);
    for (const auto& [count, phase] : mutations)
        fmt::print("  audited mutations, {:>2} client(s):          {:>8.0f} /s  p50 {:>6.1f} ms  "
                   "p99 {:>6.1f} ms  {:>5.2f}x one-row  {:>5.2f}x batched  ({} calls)\n",
                   count, phase.perSecond, phase.p50Ms, phase.p99Ms, phase.perSecond / oneRow,
                   phase.perSecond / batched, phase.calls);
    fmt::print("  reads (WhoAmI), 32 clients:                 {:>8.0f} /s  p50 {:>6.1f} ms  "
               "p99 {:>6.1f} ms  ({} calls)\n",
               reads.perSecond, reads.p50Ms, reads.p99Ms, reads.calls);
    fmt::print("  no database (GetSigningKeys), 32 clients:   {:>8.0f} /s  p50 {:>6.1f} ms  "
               "p99 {:>6.1f} ms  ({} calls)\n",
               transport.perSecond, transport.p50Ms, transport.p99Ms, transport.calls);
    const Phase& top = mutations.back().second;
    fmt::print("  goals: audited at 32 >= 1000/s: {}; reads >= 5000/s: {}; p99 <= 100 ms: {}\n",
               top.perSecond >= 1000 ? "met" : "NOT met",
               reads.perSecond >= 5000 ? "met" : "NOT met",
               std::max(top.p99Ms, reads.p99Ms) <= 100 ? "met" : "NOT met");

    clients.clear();
    return 0;
}
