// The compliance report over a long log (issue #49; docs/performance.md), in one run:
//   fill      ENTRIES audit entries appended through the control plane's own log (sign-ins,
//   refusals,
//             access changes, approvals, imports: what the controls count), 10,000 per transaction
//   ceiling   one pass that reads and decodes the whole log a page at a time and does nothing else
//   report    `compliance report` over TLS from an auditor's client, as sealtrainctl asks for it:
//             the caller checked, the live log verified, every entry indexed, the bundle exported
//   memory    the process's peak RSS above its RSS before the report, beside what the decoded log
//             would take if it were held whole (the report before issue #49 held it)
//   waiting   another user's calls (whoAmI, in a loop) while the report runs: the longest wait,
//             and how many gave up at the client's deadline (the report lets waiting calls
//             run after each page it reads; before, it held the control plane's lock throughout)
// Usage: bench_compliance [ENTRIES] [DIR]   (default 10000000, in the system's temporary folder)
#include "bench_support.h"
#include "control_bench.h"

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/core/audit/queries.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/store/database.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace sealtrain;
using bench::check;
using bench::take;

namespace {

using WallClock = std::chrono::steady_clock;
constexpr std::uint64_t kPerTransaction = 10'000;
constexpr std::uint64_t kPage = 4096;

double secondsSince(WallClock::time_point start)
{
    return std::chrono::duration<double>(WallClock::now() - start).count();
}

// The i-th filler entry: a mix of what the controls count, and plain changes they do not.
audit::EntryDraft fillerEntry(std::uint64_t i)
{
    audit::EntryDraft draft;
    const std::string user = fmt::format("user{}", i % 97);
    draft.actor = {audit::ActorKind::User, user, fmt::format("s{}", i % 1013), "password+totp"};
    draft.requestId = fmt::format("bench-{}", i);
    switch (i % 8) {
    case 0:
        draft.action = "session.sign_in";
        draft.target = {"user", user};
        break;
    case 1:
        draft.action = "session.sign_in";
        draft.target = {"user", user};
        draft.outcome = audit::Outcome::Denied;
        draft.reason = "wrong credentials";
        draft.details.push_back(audit::textDetail("reason_code", "wrong_credentials"));
        break;
    case 2:
        draft.action = "grant.add";
        draft.target = {"user", user};
        draft.details.push_back(audit::textDetail("role", "engineer"));
        break;
    case 3:
        draft.action = "dataset.import";
        draft.target = {"dataset", fmt::format("d{}", i)};
        break;
    case 4:
        draft.action = "job.list";
        draft.target = {"job", "*"};
        draft.outcome = audit::Outcome::Denied;
        draft.reason = "no permission";
        draft.details.push_back(audit::textDetail("reason_code", "no_permission"));
        break;
    default:
        draft.action = "role.list";
        draft.target = {"role", "*"};
        break;
    }
    return draft;
}

void fill(core::DataDirectory& platform, std::uint64_t entries)
{
    auto& log = platform.controlPlane().auditLog();
    const auto start = WallClock::now();
    for (std::uint64_t done = 0; done < entries;) {
        auto transaction = take(platform.database().begin());
        const std::uint64_t batch = std::min(kPerTransaction, entries - done);
        for (std::uint64_t i = 0; i < batch; ++i)
            (void)take(log.append(*transaction, fillerEntry(done + i)));
        check(transaction->commit());
        done += batch;
        if (done % 1'000'000 == 0 || done == entries)
            std::fprintf(stderr, "filled %llu of %llu entries (%.0f s)\n",
                         static_cast<unsigned long long>(done),
                         static_cast<unsigned long long>(entries), secondsSince(start));
    }
}

// The ceiling: every entry read and decoded once, a page at a time; returns the decoded bytes'
// rough size (what holding the log whole would take).
std::uint64_t readWholeLog(core::DataDirectory& platform)
{
    const auto& store = platform.controlPlane().auditLog().store();
    const std::uint64_t size = take(store.entryCount());
    std::uint64_t bytes = 0;
    for (std::uint64_t at = 0; at < size; at += kPage) {
        const auto page = take(store.readEntries(at, std::min(kPage, size - at)));
        for (const audit::Entry& e : take(core::decodeStoredEntries(page))) {
            bytes += sizeof(audit::Entry) + e.action.size() + e.actor.id.size()
                     + e.actor.session.size() + e.target.id.size() + e.reason.size()
                     + e.requestId.size();
            for (const auto& d : e.details)
                bytes += sizeof(d) + d.name.size() + d.value.size();
        }
    }
    return bytes;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::uint64_t entries = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
    const std::filesystem::path dir =
        (argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path())
        / fmt::format("bench-compliance-{}", ::getpid());
    bench::prepareBenchFolder(dir);
    bench::InProcessControl control(dir, {});
    control.addUser("rita", {"auditor"});
    control.addUser("eve", {"engineer"});
    fill(control.platform(), entries);

    auto start = WallClock::now();
    const std::uint64_t decodedBytes = readWholeLog(control.platform());
    const double ceilingSeconds = secondsSince(start);

    control.serve({});
    auto rita = control.signIn("rita");
    auto eve = control.signIn("eve");

    // Another user's calls meanwhile: the longest one is how long a call waits for the report.
    // A call that runs past the client's deadline (30 s) is counted, not fatal: at 10 M entries
    // that is what happens.
    std::atomic<bool> reporting{true};
    std::vector<double> waits;
    std::size_t timedOut = 0;
    std::thread probe([&] {
        while (reporting.load()) {
            const auto asked = WallClock::now();
            const auto answered = eve->sessions().whoAmI();
            waits.push_back(secondsSince(asked));
            timedOut += answered ? 0U : 1U;
        }
    });
    std::ofstream("/proc/self/clear_refs") << "5";  // the peak from here on
    const long long rssBefore = bench::statusKiB("VmRSS:");
    start = WallClock::now();
    const auto report = take(rita->compliance().complianceReport());
    const double reportSeconds = secondsSince(start);
    const long long peak = bench::statusKiB("VmHWM:");
    reporting = false;
    probe.join();

    const double longestWait = waits.empty() ? 0.0 : *std::max_element(waits.begin(), waits.end());
    std::size_t passed = 0;
    for (const auto& c : report.controls)
        passed += c.verdict == "passed" ? 1U : 0U;
    std::printf(
        "log:      %llu entries (%llu filled), %zu controls judged, %zu passed, %zu cited\n",
        static_cast<unsigned long long>(report.logSize), static_cast<unsigned long long>(entries),
        report.controls.size(), passed, report.cited.size());
    std::printf("report:   %.2f s; ceiling (read and decode the log once): %.2f s; ratio %.2f\n",
                reportSeconds, ceilingSeconds,
                ceilingSeconds > 0 ? reportSeconds / ceilingSeconds : 0.0);
    std::printf("memory:   peak %.1f MiB above the %.1f MiB before the report; the decoded log "
                "held whole would be %.1f MiB\n",
                static_cast<double>(peak - rssBefore) / 1024.0,
                static_cast<double>(rssBefore) / 1024.0,
                static_cast<double>(decodedBytes) / (1024.0 * 1024.0));
    std::printf("waiting:  %zu calls by another user during the report, the longest %.2f s "
                "(%.0f %% of the report); %zu gave up at the client's 30 s deadline\n",
                waits.size(), longestWait,
                reportSeconds > 0 ? 100.0 * longestWait / reportSeconds : 0.0, timedOut);
    return 0;
}
