// Audit forwarding (issue #31): committed entries become JSON lines with their sequence and
// leaf hash; a rolled-back transaction forwards nothing; and the copy is checked against a
// bundle, which catches an edited line, other bytes, a removed line and a line of another log.
// Issue #48 adds the rules of docs/formats/audit-forward.md that none guarded: the readable time
// fields, O_NOFOLLOW, and each step of "Checking a copy" (mutations: tests/mutations/audit-
// forward-*). Issue #49: delivery at least once from the log itself (a refusing target loses
// nothing, a restart resumes at the cursor, another log starts again from 0), signed heads in
// the copy that let it verify on its own, and a missing prefix or a twice-seen sequence refused.
#include "sealtrain/audit/forward.h"
#include "sealtrain/audit/forward_spool.h"

#include "audit_fixture.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/result.h"

#include <QtTest/QtTest>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace sealtrain;
using namespace sealtrain::audit;
using sealtrain::testing::TestLog;

namespace {

// A target that keeps lines in memory (entry lines in `lines`, every line in `all`) and refuses
// deliveries while `refusing` is set.
struct Collected final : ForwardTarget {
    std::vector<std::string> lines;
    std::vector<std::string> all;
    bool refusing = false;

    [[nodiscard]] std::string describe() const override { return "memory:test"; }
    Result<void> deliver(std::span<const ForwardLine> given) override
    {
        if (refusing)
            return Error(ErrorCode::Io, "The test target refuses lines.");
        for (const auto& line : given) {
            if (line.kind == "entry")
                lines.push_back(line.text);
            all.push_back(line.text);
        }
        return success();
    }
    [[nodiscard]] std::string text() const
    {
        std::string joined;
        for (const auto& line : lines)
            joined += line + "\n";
        return joined;
    }
};

// A DurableForwarder over a test log's store, pumped by hand (the store is not for threads), its
// cursor in a folder of its own.
struct Spool {
    QTemporaryDir dir;
    std::unique_ptr<DurableForwarder> forwarder;

    Spool(TestLog& t, std::unique_ptr<ForwardTarget> target, SpoolOptions options = {})
    {
        options.startThread = false;
        forwarder = DurableForwarder::start(std::move(target), t.store, cursorFile(),
                                            "sealtrain.test/audit", options)
                        .value();
    }
    [[nodiscard]] std::filesystem::path cursorFile() const
    {
        return std::filesystem::path(dir.path().toStdString()) / "audit-forward.cursor";
    }
    bool pump() const { return forwarder->pump(); }
};

// The test's Collected, owned by the spool's forwarder.
struct Forwarded {
    Collected* target = nullptr;
    std::unique_ptr<Spool> spool;

    explicit Forwarded(TestLog& t, SpoolOptions options = {})
    {
        auto owned = std::make_unique<Collected>();
        target = owned.get();
        spool = std::make_unique<Spool>(t, std::move(owned), options);
    }
    bool pump() const { return spool->pump(); }
};

VerifyOptions trusting(const TestLog& log)
{
    VerifyOptions options;
    options.trustedKey = log.signingKey.publicKey().keyId();
    return options;
}

std::string errorsOf(const ForwardCheck& check)
{
    std::string all;
    for (const auto& error : check.errors)
        all += error + "\n";
    return all;
}

// Replaces line `index` of `text` with the result of `edit` on its JSON.
std::string editLine(const std::vector<std::string>& lines, std::size_t index,
                     const std::function<void(nlohmann::json&)>& edit)
{
    std::string all;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i != index) {
            all += lines[i] + "\n";
            continue;
        }
        auto json = nlohmann::json::parse(lines[i]);
        edit(json);
        all += json.dump() + "\n";
    }
    return all;
}

// The lines joined as a forwarded copy holds them.
std::string joined(const std::vector<std::string>& lines)
{
    std::string all;
    for (const auto& line : lines)
        all += line + "\n";
    return all;
}

// `line` with its entry re-encoded under another action and a leaf hash computed for it: sound on
// its own, but not the entry the log wrote.
std::string forgedLine(const std::string& line)
{
    auto json = nlohmann::json::parse(line);
    auto entry = decodeEntry(*fromBase64(json["entry"].get<std::string>())).value();
    entry.action = "job.cancel";
    const auto bytes = encodeEntry(entry).value();
    json["entry"] = toBase64(bytes);
    json["leaf_hash"] = toHex(leafHash(bytes));
    json["action"] = "job.cancel";
    return json.dump();
}

}  // namespace

class TestAuditForward : public QObject {
    Q_OBJECT

private slots:
    void committedEntriesAreForwardedInOrder()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(5);
        forwarded.pump();
        QCOMPARE(target.lines.size(), std::size_t{5});
        for (std::size_t i = 0; i < target.lines.size(); ++i) {
            const auto json = nlohmann::json::parse(target.lines[i]);
            QCOMPARE(json["format"].get<std::string>(), std::string(kForwardFormat));
            QCOMPARE(json["sequence"].get<std::uint64_t>(), i);
            const auto stored = t.store.readEntries(i, 1).value().front();
            QCOMPARE(json["leaf_hash"].get<std::string>(), toHex(stored.leafHash));
            QCOMPARE(fromBase64(json["entry"].get<std::string>()).value(), stored.bytes);
            QCOMPARE(json["action"].get<std::string>(), testing::draftNumber(int(i)).action);
        }
        // The sensitive value appears only as its keyed hash, as in the log.
        QVERIFY(target.text().find("patients") == std::string::npos);
    }

    void aRolledBackTransactionForwardsNothing()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        {
            auto transaction = t.store.begin();
            QVERIFY(t.log->append(*transaction, testing::draftNumber(0)));
            QVERIFY(t.log->append(*transaction, testing::draftNumber(1)));
            // destroyed without commit: rolled back
        }
        QVERIFY(target.lines.empty());
        t.append(1);
        forwarded.pump();
        QCOMPARE(target.lines.size(), std::size_t{1});
        QCOMPARE(nlohmann::json::parse(target.lines[0])["sequence"].get<int>(), 0);
    }

    void aCopyChecksAgainstTheBundle()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(12, 4);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto check = checkForwarded(target.text(), bundle, trusting(t));
        QVERIFY2(check.ok(), errorsOf(check).c_str());
        QCOMPARE(check.lines, std::uint64_t{12});
        QCOMPARE(check.entriesMatched, std::uint64_t{12});
        QCOMPARE(check.entriesUnsigned, std::uint64_t{0});

        // Entries after the bundle's head are unconfirmed, not failed.
        t.append(2);
        forwarded.pump();
        const auto newer = checkForwarded(target.text(), bundle, trusting(t));
        QVERIFY2(newer.errors.empty(), errorsOf(newer).c_str());
        QCOMPARE(newer.entriesUnsigned, std::uint64_t{2});
    }

    void tamperingWithTheCopyIsCaught_data()
    {
        QTest::addColumn<QString>("attack");
        QTest::addColumn<QString>("expected");
        QTest::newRow("summary edited") << "summary"
                                        << "says actor differently";
        QTest::newRow("leaf hash edited") << "leaf"
                                          << "leaf hash that is not its entry's";
        QTest::newRow("other bytes, own hash") << "bytes"
                                               << "other bytes than the signed log's";
        QTest::newRow("line removed") << "removed"
                                      << "no gap line stands for them";
        QTest::newRow("another log's line") << "origin"
                                            << "another log";
        QTest::newRow("not JSON") << "garbage"
                                  << "not a forwarded entry";
    }

    void tamperingWithTheCopyIsCaught()
    {
        QFETCH(QString, attack);
        QFETCH(QString, expected);
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(10, 5);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        std::string copy;
        if (attack == "summary") {
            copy = editLine(target.lines, 4,
                            [](nlohmann::json& json) { json["actor"]["id"] = "mallory"; });
        } else if (attack == "leaf") {
            copy = editLine(target.lines, 4,
                            [](nlohmann::json& json) { json["leaf_hash"] = std::string(64, '0'); });
        } else if (attack == "bytes") {
            // A re-encoded entry with another action and a leaf hash computed for it: sound on
            // its own, but not what the signed log holds.
            copy = editLine(target.lines, 4, [](nlohmann::json& json) {
                auto entry = decodeEntry(*fromBase64(json["entry"].get<std::string>())).value();
                entry.action = "job.cancel";
                const auto bytes = encodeEntry(entry).value();
                json["entry"] = toBase64(bytes);
                json["leaf_hash"] = toHex(leafHash(bytes));
                json["action"] = "job.cancel";
            });
        } else if (attack == "removed") {
            auto lines = target.lines;
            lines.erase(lines.begin() + 4);
            for (const auto& line : lines)
                copy += line + "\n";
        } else if (attack == "origin") {
            copy = editLine(target.lines, 4,
                            [](nlohmann::json& json) { json["origin"] = "elsewhere/audit"; });
        } else {
            copy = target.text() + "this is not json\n";
        }
        const auto check = checkForwarded(copy, bundle, trusting(t));
        QVERIFY2(!check.errors.empty(), "the tampered copy passed");
        QVERIFY2(errorsOf(check).find(expected.toStdString()) != std::string::npos,
                 errorsOf(check).c_str());
        for (const auto& error : check.errors)
            QVERIFY2(isOneSentence(error), error.c_str());
    }

    void aBundleThatFailsFailsTheCheck()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(4, 2);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        TestLog other(2);  // another key: the bundle is not signed by the key we trust
        const auto check = checkForwarded(target.text(), bundle, trusting(other));
        QVERIFY(!check.errors.empty());
        QVERIFY2(check.errors.front().starts_with("The bundle does not verify"),
                 check.errors.front().c_str());
    }

    void aRefusingTargetCatchesUpInOrder()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(2);
        forwarded.pump();
        target.refusing = true;
        t.append(3);
        forwarded.pump();
        QCOMPARE(target.lines.size(), std::size_t{2});
        const auto failing = forwarded.spool->forwarder->health();
        QCOMPARE(failing.delivered, std::uint64_t{2});
        QCOMPARE(failing.lag(), std::uint64_t{3});
        QVERIFY(!failing.lastError.empty());
        QVERIFY(failing.failingSinceUnix.has_value());
        target.refusing = false;
        t.append(1);
        forwarded.pump();
        QCOMPARE(target.lines.size(), std::size_t{6});
        const auto healthy = forwarded.spool->forwarder->health();
        QCOMPARE(healthy.delivered, std::uint64_t{6});
        QCOMPARE(healthy.lag(), std::uint64_t{0});
        QVERIFY(healthy.lastError.empty());
        QCOMPARE(healthy.failures, std::uint64_t{1});
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto check = checkForwarded(target.text(), bundle, trusting(t));
        QVERIFY2(check.ok(), errorsOf(check).c_str());
        QCOMPARE(check.entriesMatched, std::uint64_t{6});
    }

    // The log is the spool: however long the target refuses, nothing is dropped and no gap is
    // written; every entry arrives, in order, once it takes lines again.
    void aLongRefusalLosesNothing()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t, SpoolOptions{.batchEntries = 4});
        auto& target = *forwarded.target;
        target.refusing = true;
        t.append(50);
        QVERIFY(!forwarded.pump());
        QVERIFY(target.all.empty());
        target.refusing = false;
        QVERIFY(forwarded.pump());
        QCOMPARE(target.lines.size(), std::size_t{50});
        for (std::size_t i = 0; i < target.lines.size(); ++i)
            QCOMPARE(nlohmann::json::parse(target.lines[i])["sequence"].get<std::size_t>(), i);
        for (const auto& line : target.all)
            QVERIFY(nlohmann::json::parse(line)["type"] != "gap");
    }

    // After a crash the forwarder starts at its cursor: what the target took before is not sent
    // again (beyond the batch in flight), what it had not is.
    void aRestartResumesAtTheCursor()
    {
        TestLog t(1, {0, {}, {}});
        QTemporaryDir dir;
        const auto cursor = std::filesystem::path(dir.path().toStdString()) / "cursor";
        auto first = std::make_unique<Collected>();
        auto* firstTarget = first.get();
        SpoolOptions options;
        options.startThread = false;
        {
            auto forwarder = DurableForwarder::start(std::move(first), t.store, cursor,
                                                     "sealtrain.test/audit", options)
                                 .value();
            t.append(5);
            QVERIFY(forwarder->pump());
        }
        QCOMPARE(firstTarget == nullptr, false);
        const auto saved = readForwardCursor(cursor).value();
        QVERIFY(saved.has_value());
        QCOMPARE(saved->delivered, std::uint64_t{5});
        QCOMPARE(saved->target, std::string("memory:test"));
        t.append(3);
        auto second = std::make_unique<Collected>();
        auto* secondTarget = second.get();
        auto forwarder = DurableForwarder::start(std::move(second), t.store, cursor,
                                                 "sealtrain.test/audit", options)
                             .value();
        QVERIFY(forwarder->pump());
        QCOMPARE(secondTarget->lines.size(), std::size_t{3});
        QCOMPARE(nlohmann::json::parse(secondTarget->lines[0])["sequence"].get<int>(), 5);
    }

    // A cursor of another log (a restored or rolled back directory: its entry there is not the
    // one forwarded) or of another target starts again from entry 0.
    void aCursorOfAnotherLogStartsAgainFromTheBeginning()
    {
        QTemporaryDir dir;
        const auto cursor = std::filesystem::path(dir.path().toStdString()) / "cursor";
        SpoolOptions options;
        options.startThread = false;
        TestLog one(1, {0, {}, {}});
        one.append(4);
        {
            auto forwarder = DurableForwarder::start(std::make_unique<Collected>(), one.store,
                                                     cursor, "sealtrain.test/audit", options)
                                 .value();
            QVERIFY(forwarder->pump());
        }
        TestLog other(2, {0, {}, {}});
        other.next = 100;  // other drafts: entries that are not the first log's
        other.append(6);
        auto target = std::make_unique<Collected>();
        auto* received = target.get();
        auto forwarder = DurableForwarder::start(std::move(target), other.store, cursor,
                                                 "sealtrain.test/audit", options)
                             .value();
        QVERIFY(forwarder->pump());
        QCOMPARE(received->lines.size(), std::size_t{6});
        QCOMPARE(forwarder->health().restarts, std::uint64_t{1});
        // A cursor that is not ours stops the start with a sentence, rather than guessing.
        std::ofstream(cursor) << "{\"format\": \"something else\"}\n";
        auto refused = DurableForwarder::start(std::make_unique<Collected>(), other.store, cursor,
                                               "sealtrain.test/audit", options);
        QVERIFY(!refused);
        QVERIFY2(isOneSentence(refused.error().message()), refused.error().message().c_str());
    }

    // The newest signed head follows the entries it covers, and the copy then verifies on its own
    // (no bundle): its heads are signed by the log key over the copy's own entries.
    void signedHeadsTravelAndTheCopyVerifiesOnItsOwn()
    {
        TestLog t(1, {4, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(10);
        QVERIFY(forwarded.pump());
        std::vector<std::uint64_t> headSizes;
        for (const auto& line : target.all) {
            const auto json = nlohmann::json::parse(line);
            if (json["type"] == "head")
                headSizes.push_back(json["tree_size"].get<std::uint64_t>());
        }
        QCOMPARE(headSizes, (std::vector<std::uint64_t>{8}));
        const auto copy = joined(target.all);
        VerifyOptions pem;
        pem.trustedKey = t.signingKey.publicKey().toPem();
        const auto check = checkForwarded(copy, "", pem);
        QVERIFY2(check.errors.empty(), errorsOf(check).c_str());
        QCOMPARE(check.headsVerified, std::uint64_t{1});
        QCOMPARE(check.entriesUnderHeads, std::uint64_t{8});
        QCOMPARE(check.entriesUnsigned, std::uint64_t{2});  // 8 and 9: under no head yet
        // Another key's verdict: the head fails.
        TestLog other(2);
        VerifyOptions wrong;
        wrong.trustedKey = other.signingKey.publicKey().toPem();
        const auto forged = checkForwarded(copy, "", wrong);
        QVERIFY2(errorsOf(forged).find("tree head the trusted key did not sign")
                     != std::string::npos,
                 errorsOf(forged).c_str());
        // A head whose entries were swapped for others' does not match the copy's root.
        auto lines = target.all;
        lines[3] = forgedLine(lines[3]);
        const auto swapped = checkForwarded(joined(lines), "", pem);
        QVERIFY2(errorsOf(swapped).find("root is not that of the copy's first 8 entries")
                     != std::string::npos,
                 errorsOf(swapped).c_str());
        // Without a key nothing is VERIFIED: a warning says the heads were not checked.
        const auto unkeyed = checkForwarded(copy, "", {});
        QVERIFY(unkeyed.errors.empty());
        QVERIFY(!unkeyed.warnings.empty());
    }

    // verify-forwarded refuses a copy whose beginning was cut off, and a sequence seen twice
    // with different entries (issue #49).
    void aMissingPrefixAndATwiceSeenSequenceFail()
    {
        TestLog t(1, {4, {}, {}});
        Forwarded forwarded(t);
        t.append(10);
        QVERIFY(forwarded.pump());
        VerifyOptions pem;
        pem.trustedKey = t.signingKey.publicKey().toPem();
        auto lines = forwarded.target->all;
        const std::vector<std::string> withoutPrefix(lines.begin() + 2, lines.end());
        const auto cut = checkForwarded(joined(withoutPrefix), "", pem);
        QVERIFY2(errorsOf(cut).find("begins at entry 2: entries 0 to 1 are missing")
                     != std::string::npos,
                 errorsOf(cut).c_str());
        // The same sequence again, holding another log's entry 5 (same origin, sound on its own).
        TestLog other(2, {0, {}, {}});
        other.next = 100;  // other drafts: entries that are not the first log's
        Forwarded otherForwarded(other);
        other.append(6);
        QVERIFY(otherForwarded.pump());
        lines.push_back(otherForwarded.target->lines[5]);
        const auto twice = checkForwarded(joined(lines), "", pem);
        QVERIFY2(errorsOf(twice).find("holds another entry 5 than an earlier line")
                     != std::string::npos,
                 errorsOf(twice).c_str());
        // The same entry twice (a redelivery) is fine.
        lines.back() = forwarded.target->lines[5];
        const auto again = checkForwarded(joined(lines), "", pem);
        QVERIFY2(again.errors.empty(), errorsOf(again).c_str());
    }

    // A file is appended to, never truncated: a restarted daemon goes on after the last line.
    void aFileTargetAppendsPrivately()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("audit.jsonl").toStdString();
        TestLog t;
        t.append(3, 3);
        const auto entries = t.store.readEntries(0, 3).value();
        std::vector<ForwardLine> lines;
        lines.reserve(entries.size());
        for (const auto& entry : entries)
            lines.push_back({forwardedEntryLine("sealtrain.test/audit", entry).value(), "entry",
                             entry.sequence, toHex(entry.leafHash), 0});
        {
            auto first = openForwardTarget("file:" + path, {});
            QVERIFY2(first, first ? "" : first.error().message().c_str());
            QVERIFY((*first)->deliver(std::span(lines).first(2)));
        }
        auto again = openForwardTarget("file:" + path, {}).value();
        QVERIFY(again->deliver(std::span(lines).subspan(2)));
        std::ifstream in(path);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        QCOMPARE(std::count(text.begin(), text.end(), '\n'), 3L);
        const auto check = checkForwarded(text, exportBundle(*t.log, {}).value(), trusting(t));
        QVERIFY2(check.ok(), errorsOf(check).c_str());
        QCOMPARE(check.entriesMatched, std::uint64_t{3});
        QCOMPARE(QFileInfo(QString::fromStdString(path)).permissions()
                     & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteOther),
                 QFileDevice::Permissions());
    }

    void badTargetsAreRefusedWithASentence_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<int>("code");
        QTest::newRow("relative file") << "file:audit.jsonl" << int(ErrorCode::InvalidArgument);
        QTest::newRow("unknown") << "syslog" << int(ErrorCode::InvalidArgument);
        QTest::newRow("syslog without a port")
            << "syslog-tls://siem.example" << int(ErrorCode::InvalidArgument);
        QTest::newRow("syslog without a host")
            << "syslog-tls://:6514" << int(ErrorCode::InvalidArgument);
        QTest::newRow("syslog port out of range")
            << "syslog-tls://siem.example:70000" << int(ErrorCode::InvalidArgument);
        QTest::newRow("syslog with a path")
            << "syslog-tls://siem.example:6514/x" << int(ErrorCode::InvalidArgument);
        QTest::newRow("missing folder")
            << "file:/nonexistent-folder/audit.jsonl" << int(ErrorCode::Io);
    }

    void badTargetsAreRefusedWithASentence()
    {
        QFETCH(QString, target);
        QFETCH(int, code);
        auto forwarder = openForwardTarget(target.toStdString(), {});
        QVERIFY(!forwarder);
        QCOMPARE(int(forwarder.error().code()), code);
        QVERIFY2(isOneSentence(forwarder.error().message()), forwarder.error().message().c_str());
    }

    // The journal's native protocol, received on a socket of our own in its place.
    void theJournalGetsFieldsAndTheLine()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("journal.socket").toStdString();
        const int server = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        QVERIFY(server >= 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
        QCOMPARE(::bind(server, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        TargetOptions absent;
        absent.journalSocket = dir.filePath("absent.socket").toStdString();
        QVERIFY(!openForwardTarget("journal", absent));
        TargetOptions options;
        options.journalSocket = path;
        auto forwarder = openForwardTarget("journal", options);
        QVERIFY2(forwarder, forwarder ? "" : forwarder.error().message().c_str());
        TestLog t(1, {0, {}, {}});
        Spool spool(t, std::move(*forwarder));
        t.append(1);
        QVERIFY(spool.pump());
        std::string datagram(1U << 16U, '\0');
        const auto got = ::recv(server, datagram.data(), datagram.size(), MSG_DONTWAIT);
        ::close(server);
        QVERIFY(got > 0);
        datagram.resize(static_cast<std::size_t>(got));
        const auto stored = t.store.readEntries(0, 1).value().front();
        QVERIFY(datagram.find("SEALTRAIN_AUDIT_SEQUENCE=0\n") != std::string::npos);
        QVERIFY(datagram.find("SEALTRAIN_AUDIT_LEAF_HASH=" + toHex(stored.leafHash) + "\n")
                != std::string::npos);
        const auto message = datagram.find("MESSAGE=");
        QVERIFY(message != std::string::npos);
        const auto line = datagram.substr(message + 8, datagram.size() - message - 9);
        QCOMPARE(nlohmann::json::parse(line)["leaf_hash"].get<std::string>(),
                 toHex(stored.leafHash));
    }

    // audit-forward.md, "Lines": the readable fields say what the entry says, the time as RFC 3339
    // UTC to the second and as nanoseconds since the epoch (issue #48).
    void theReadableFieldsAreTheEntrysOwn()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(4);
        forwarded.pump();
        QCOMPARE(target.lines.size(), std::size_t{4});
        // The test clock starts at 2026-11-30T09:00:00Z and moves one second after each entry.
        const auto json = nlohmann::json::parse(target.lines[3]);
        const auto draft = testing::draftNumber(3);
        QCOMPARE(json["type"].get<std::string>(), std::string("entry"));
        QCOMPARE(json["origin"].get<std::string>(), std::string("sealtrain.test/audit"));
        QCOMPARE(json["time"].get<std::string>(), std::string("2026-11-30T09:00:03Z"));
        QCOMPARE(json["time_ns"].get<std::uint64_t>(),
                 std::uint64_t{1796029203} * std::uint64_t{1000000000});
        QCOMPARE(json["actor"]["kind"].get<std::string>(), std::string("user"));
        QCOMPARE(json["actor"]["id"].get<std::string>(), draft.actor.id);
        QCOMPARE(json["actor"]["session"].get<std::string>(), draft.actor.session);
        QCOMPARE(json["actor"]["auth"].get<std::string>(), draft.actor.authMethod);
        QCOMPARE(json["target"]["kind"].get<std::string>(), draft.target.kind);
        QCOMPARE(json["target"]["id"].get<std::string>(), draft.target.id);
        QCOMPARE(json["outcome"].get<std::string>(), std::string("denied"));
        QCOMPARE(json["reason"].get<std::string>(), draft.reason);
    }

    // audit-forward.md, "Targets": the file is opened with O_NOFOLLOW, so a symbolic link put in
    // its place is refused, never followed (issue #48).
    void aFileTargetDoesNotFollowALink()
    {
        QTemporaryDir dir;
        const std::filesystem::path elsewhere = dir.filePath("elsewhere.txt").toStdString();
        const std::filesystem::path linkPath = dir.filePath("audit.jsonl").toStdString();
        std::ofstream(elsewhere) << "not the audit copy\n";
        std::filesystem::create_symlink(elsewhere, linkPath);
        auto forwarder = openForwardTarget("file:" + linkPath.string(), {});
        QVERIFY(!forwarder);
        QCOMPARE(int(forwarder.error().code()), int(ErrorCode::Io));
        QVERIFY2(isOneSentence(forwarder.error().message()), forwarder.error().message().c_str());
        std::ifstream in(elsewhere);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        QCOMPARE(text, std::string("not the audit copy\n"));
    }

    // audit-forward.md, "Checking a copy" 1: a line of another format fails (issue #48).
    void aLineOfAnotherFormatFails()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(10, 5);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto copy = editLine(target.lines, 4, [](nlohmann::json& json) {
            json["format"] = "sealtrain-audit-forward-2";
        });
        const auto check = checkForwarded(copy, bundle, trusting(t));
        QVERIFY2(errorsOf(check).find("its format is not sealtrain-audit-forward-1")
                     != std::string::npos,
                 errorsOf(check).c_str());
    }

    // audit-forward.md, "Checking a copy" 2: the decoded entry holds the line's sequence; a line
    // that names another sequence number fails (issue #48).
    void aLineNamesItsEntrysSequence()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(10, 5);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto copy = editLine(
            target.lines, 4, [](nlohmann::json& json) { json["sequence"] = std::uint64_t{7}; });
        const auto check = checkForwarded(copy, bundle, trusting(t));
        QVERIFY2(errorsOf(check).find("names another sequence number than its entry's")
                     != std::string::npos,
                 errorsOf(check).c_str());
    }

    // audit-forward.md, "Checking a copy" 4: an entry whose predecessor is in the copy chains to
    // it, which catches a replaced entry the bundle can not vouch for (issue #48).
    void anEntryChainsToThePredecessorInTheCopy()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(4, 4);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        t.append(4);  // entries 4 to 7: after the bundle's newest signed head
        forwarded.pump();
        auto lines = target.lines;
        QCOMPARE(lines.size(), std::size_t{8});
        lines[5] = forgedLine(lines[5]);
        const auto check = checkForwarded(joined(lines), bundle, trusting(t));
        QCOMPARE(check.entriesUnsigned, std::uint64_t{4});
        QVERIFY2(errorsOf(check).find("Line 7 of the forwarded copy does not chain to the entry "
                                      "before it")
                     != std::string::npos,
                 errorsOf(check).c_str());
    }

    // audit-forward.md, "Checking a copy" 5: a sequence seen twice holds the same entry; a line
    // replayed as it was passes, another entry under the same number fails (issue #48).
    void aSequenceSeenTwiceHoldsTheSameEntry()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(10, 5);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto replayed =
            checkForwarded(target.text() + target.lines[4] + "\n", bundle, trusting(t));
        QVERIFY2(replayed.errors.empty(), errorsOf(replayed).c_str());
        const auto check =
            checkForwarded(target.text() + forgedLine(target.lines[4]) + "\n", bundle, trusting(t));
        QVERIFY2(errorsOf(check).find("holds another entry 4 than an earlier line")
                     != std::string::npos,
                 errorsOf(check).c_str());
    }

    // audit-forward.md, "Checking a copy" 6: a gap line stands only for the entries it names; a
    // line removed after them still fails the check (issue #48).
    void aGapLineStandsOnlyForTheEntriesItNames()
    {
        // A copy as an older daemon's bounded backlog left it: entry 0, a gap line for 1 and 2,
        // entries 3 to 6.
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        t.append(7);
        QVERIFY(forwarded.pump());
        auto lines = forwarded.target->lines;
        lines.erase(lines.begin() + 1, lines.begin() + 3);
        lines.insert(lines.begin() + 1, forwardedGapLine("sealtrain.test/audit", 1, 2));
        QCOMPARE(lines.size(), std::size_t{6});
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto gapOnly = checkForwarded(joined(lines), bundle, trusting(t));
        QVERIFY2(gapOnly.errors.empty(), errorsOf(gapOnly).c_str());
        QCOMPARE(gapOnly.gaps.front(), (std::pair<std::uint64_t, std::uint64_t>{1, 2}));
        QVERIFY(!gapOnly.ok());
        lines.erase(lines.begin() + 3);  // entry 4, which no gap line names
        const auto check = checkForwarded(joined(lines), bundle, trusting(t));
        QVERIFY2(errorsOf(check).find("Entries 4 to 4 are missing from the forwarded copy")
                     != std::string::npos,
                 errorsOf(check).c_str());
        // Nor does a gap line of another log: one naming entry 4, put where it was, is refused
        // as another log's, and the entry is still missing.
        lines.insert(lines.begin() + 3, forwardedGapLine("other.site/audit", 4, 4));
        const auto forged = checkForwarded(joined(lines), bundle, trusting(t));
        QVERIFY2(errorsOf(forged).find("Line 4 of the forwarded copy comes from another log")
                     != std::string::npos,
                 errorsOf(forged).c_str());
        QVERIFY(!forged.ok());
        // The same gap line with this log's origin would have stood for it.
        lines[3] = forwardedGapLine("sealtrain.test/audit", 4, 4);
        const auto declared = checkForwarded(joined(lines), bundle, trusting(t));
        QVERIFY2(declared.errors.empty(), errorsOf(declared).c_str());
    }

    // audit-forward.md, "Checking a copy", exit status 3: entries at the end of the signed log
    // that are not in the copy are reported, so the copy is not VERIFIED (issue #48).
    void entriesTheSignedLogEndsWithAreNotInTheCopy()
    {
        TestLog t(1, {0, {}, {}});
        Forwarded forwarded(t);
        auto& target = *forwarded.target;
        t.append(10, 5);
        forwarded.pump();
        const auto bundle = exportBundle(*t.log, {}).value();
        const std::vector<std::string> firstSeven(target.lines.begin(), target.lines.begin() + 7);
        const auto check = checkForwarded(joined(firstSeven), bundle, trusting(t));
        QVERIFY2(check.errors.empty(), errorsOf(check).c_str());
        QCOMPARE(check.gaps.size(), std::size_t{1});
        QCOMPARE(check.gaps.front(), (std::pair<std::uint64_t, std::uint64_t>{7, 9}));
        QVERIFY(!check.ok());
    }
};

QTEST_APPLESS_MAIN(TestAuditForward)
#include "test_audit_forward.moc"
