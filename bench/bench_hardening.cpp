// What an attacker's cheapest calls cost everyone else (issue #27): the other users' calls'
// latency and the daemon's memory while the attacks of the adversarial run go on, beside the
// same calls with no attack, in one run.
//   quiet          4 signed-in users call Sessions.WhoAmI and Datasets.ListDatasets in a loop
//   under attack   the same, while 32 threads sign in anonymously with unknown names (an
//                  Argon2id of 64 MiB or more each, bounded by --max-password-checks) and a
//                  signed-in engineer submits "billion laughs" job specs (six levels of nine
//                  aliases) as fast as they are refused
// It prints each phase's p50 and p99 beside the goal (p99 under 100 ms) and the process's peak
// memory growth beside its bound: the password checks that may run at once times their memory,
// plus 64 MiB of slack. The server runs in this process (api::ControlServer over a new data
// directory), so the memory includes the clients'.
// Usage: bench_hardening [SECONDS-PER-PHASE] [DIR]   (default 5, the system's temporary folder)
#include "../tests/support/attacks.h"
#include "control_bench.h"

#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace sealtrain;

namespace {

using WallClock = std::chrono::steady_clock;
constexpr int kUsers = 4;
constexpr int kAnonymousSignIns = 32;
constexpr unsigned kPasswordChecks = 4;
constexpr double kArgon2MiB = 64.0;  // crypto::kArgon2Floor, the default password hashing

struct Phase {
    bench::Percentiles spread;
    std::size_t failures = 0;
};

// The users' calls for `seconds`: each alternates WhoAmI and ListDatasets.
Phase usersCall(std::vector<std::unique_ptr<api::ControlClient>>& users,
                std::chrono::seconds seconds)
{
    std::vector<std::vector<double>> latencies(users.size());
    std::atomic<std::size_t> failures{0};
    const auto end = WallClock::now() + seconds;
    std::vector<std::thread> threads;
    threads.reserve(users.size());
    for (std::size_t user = 0; user < users.size(); ++user)
        threads.emplace_back([&, user] {
            for (int i = 0; WallClock::now() < end; ++i) {
                const auto before = WallClock::now();
                const bool ok = i % 2 == 0 ? users[user]->sessions().whoAmI().ok()
                                           : users[user]->datasets().listDatasets().ok();
                latencies[user].push_back(
                    std::chrono::duration<double, std::milli>(WallClock::now() - before).count());
                if (!ok)
                    ++failures;
            }
        });
    for (auto& thread : threads)
        thread.join();
    std::vector<double> all;
    for (const auto& mine : latencies)
        all.insert(all.end(), mine.begin(), mine.end());
    return {bench::percentiles(std::move(all)), failures.load()};
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
        fmt::print("Usage: bench_hardening [SECONDS-PER-PHASE] [DIR]\n"
                   "  SECONDS-PER-PHASE  1 to 60, default 5\n"
                   "  DIR                where its data directory goes, default the system's "
                   "temporary folder\n");
        return 0;
    }
    const std::chrono::seconds seconds{argc > 1 ? std::strtol(argv[1], nullptr, 10) : 5};
    if (seconds.count() < 1 || seconds.count() > 60) {
        fmt::print(stderr, "bench_hardening: SECONDS-PER-PHASE must be 1 to 60.\n");
        return 2;
    }
    const std::filesystem::path base =
        argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path();
    const auto dir = base / fmt::format("bench_hardening-{}", ::getpid());
    bench::prepareBenchFolder(dir);

    bench::InProcessControl control(dir, {});
    for (int user = 0; user < kUsers; ++user)
        control.addUser(fmt::format("user{}", user), {"engineer"});
    control.addUser("mallory", {"engineer"});
    api::ServerOptions options;
    options.maxPasswordChecks = kPasswordChecks;
    control.serve(options);
    std::vector<std::unique_ptr<api::ControlClient>> users;
    users.reserve(kUsers);
    for (int user = 0; user < kUsers; ++user)
        users.push_back(control.signIn(fmt::format("user{}", user)));
    auto mallory = control.signIn("mallory");

    const Phase quiet = usersCall(users, seconds);
    const long long quietPeakKiB = bench::statusKiB("VmHWM:");

    std::atomic<bool> attacking{true};
    std::atomic<std::size_t> signIns{0};
    std::atomic<std::size_t> busy{0};
    std::atomic<std::size_t> specs{0};
    std::atomic<std::size_t> unexpected{0};
    std::vector<std::thread> attackers;
    attackers.reserve(kAnonymousSignIns + 1);
    for (int i = 0; i < kAnonymousSignIns; ++i)
        attackers.emplace_back([&, i] {
            auto anonymous = control.anonymous();
            while (attacking) {
                auto refused = anonymous->sessions().signIn(
                    fmt::format("nobody-{}", i), bench::secret("not anyone's password"), "000000");
                ++signIns;
                if (!refused && refused.error().code() == ErrorCode::ResourceExhausted)
                    ++busy;
                else if (refused || refused.error().code() != ErrorCode::Unauthenticated)
                    ++unexpected;
            }
        });
    const std::string laughs = testing::billionLaughs();
    attackers.emplace_back([&] {
        while (attacking) {
            auto refused = mallory->jobs().submitJob(laughs);
            ++specs;
            if (refused || refused.error().code() != ErrorCode::InvalidArgument)
                ++unexpected;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the attack under way
    const Phase attacked = usersCall(users, seconds);
    attacking = false;
    for (auto& attacker : attackers)
        attacker.join();
    const long long attackedPeakKiB = bench::statusKiB("VmHWM:");

    const double grownMiB = static_cast<double>(attackedPeakKiB - quietPeakKiB) / 1024.0;
    const double boundMiB = kPasswordChecks * kArgon2MiB + 64.0;
    fmt::print("bench_hardening: sealtrain-control in-process on 127.0.0.1 (TLS 1.3), {} users, "
               "{} s per phase, {} hardware threads, --max-password-checks {}\n",
               kUsers, seconds.count(), std::thread::hardware_concurrency(), kPasswordChecks);
    fmt::print("  quiet:        p50 {:>7.1f} ms  p99 {:>7.1f} ms  ({} calls, {} failed)\n",
               quiet.spread.p50Ms, quiet.spread.p99Ms, quiet.spread.count, quiet.failures);
    fmt::print("  under attack: p50 {:>7.1f} ms  p99 {:>7.1f} ms  ({} calls, {} failed)  p99 "
               "{:.2f}x quiet\n",
               attacked.spread.p50Ms, attacked.spread.p99Ms, attacked.spread.count,
               attacked.failures, attacked.spread.p99Ms / std::max(quiet.spread.p99Ms, 0.001));
    fmt::print("  attack:       {} anonymous sign-ins ({} told busy), {} billion-laughs specs, {} "
               "answered otherwise than refused\n",
               signIns.load(), busy.load(), specs.load(), unexpected.load());
    fmt::print("  peak memory:  {:.0f} MiB before the attack, grew by {:.0f} MiB under it; bound "
               "{:.0f} MiB ({} checks x {:.0f} MiB + 64 MiB)\n",
               static_cast<double>(quietPeakKiB) / 1024.0, grownMiB, boundMiB, kPasswordChecks,
               kArgon2MiB);
    fmt::print("  goals: users' p99 under attack < 100 ms: {}; memory within its bound: {}; "
               "every attack refused: {}\n",
               attacked.spread.p99Ms < 100.0 ? "met" : "NOT met",
               grownMiB <= boundMiB ? "met" : "NOT met", unexpected.load() == 0 ? "yes" : "NO");
    users.clear();
    mallory.reset();
    return 0;
}
