// Audit forwarding (issue #31): committed entries become JSON lines with their sequence and
// leaf hash; a rolled-back transaction forwards nothing; a refusing target keeps a bounded
// backlog and writes a gap line for what it dropped; and the copy is checked against a bundle,
// which catches an edited line, other bytes, a removed line and a line of another log. Issue #48
// adds the rules of docs/formats/audit-forward.md that none guarded: the readable time fields,
// O_NOFOLLOW, and each step of "Checking a copy" (mutations: tests/mutations/audit-forward-*).
#include "sealtrain/audit/forward.h"

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

// A target that keeps lines in memory and refuses writes while `refusing` is set.
struct Collected {
    std::vector<std::string> lines;
    bool refusing = false;

    LineWriter writer()
    {
        return [this](std::string_view line, const StoredEntry*) {
            if (refusing)
                return false;
            lines.emplace_back(line);
            return true;
        };
    }
    [[nodiscard]] std::string text() const
    {
        std::string all;
        for (const auto& line : lines)
            all += line + "\n";
        return all;
    }
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(5);
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        {
            auto transaction = t.store.begin();
            QVERIFY(t.log->append(*transaction, testing::draftNumber(0)));
            QVERIFY(t.log->append(*transaction, testing::draftNumber(1)));
            // destroyed without commit: rolled back
        }
        QVERIFY(target.lines.empty());
        t.append(1);
        QCOMPARE(target.lines.size(), std::size_t{1});
        QCOMPARE(nlohmann::json::parse(target.lines[0])["sequence"].get<int>(), 0);
    }

    void aCopyChecksAgainstTheBundle()
    {
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(12, 4);
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto check = checkForwarded(target.text(), bundle, trusting(t));
        QVERIFY2(check.ok(), errorsOf(check).c_str());
        QCOMPARE(check.lines, std::uint64_t{12});
        QCOMPARE(check.entriesMatched, std::uint64_t{12});
        QCOMPARE(check.entriesBeyondBundle, std::uint64_t{0});

        // Entries after the bundle's head are unconfirmed, not failed.
        t.append(2);
        const auto newer = checkForwarded(target.text(), bundle, trusting(t));
        QVERIFY2(newer.errors.empty(), errorsOf(newer).c_str());
        QCOMPARE(newer.entriesBeyondBundle, std::uint64_t{2});
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(10, 5);
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(4, 2);
        const auto bundle = exportBundle(*t.log, {}).value();
        TestLog other(2);  // another key: the bundle is not signed by the key we trust
        const auto check = checkForwarded(target.text(), bundle, trusting(other));
        QVERIFY(!check.errors.empty());
        QVERIFY2(check.errors.front().starts_with("The bundle does not verify"),
                 check.errors.front().c_str());
    }

    void aRefusingTargetCatchesUpInOrder()
    {
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(2);
        target.refusing = true;
        t.append(3);
        QCOMPARE(target.lines.size(), std::size_t{2});
        QCOMPARE(forwarder.backlog(), std::size_t{3});
        target.refusing = false;
        t.append(1);
        QCOMPARE(target.lines.size(), std::size_t{6});
        QCOMPARE(forwarder.backlog(), std::size_t{0});
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto check = checkForwarded(target.text(), bundle, trusting(t));
        QVERIFY2(check.ok(), errorsOf(check).c_str());
        QCOMPARE(check.entriesMatched, std::uint64_t{6});
    }

    // The backlog is bounded: what it drops becomes one gap line, written before the next
    // entry; the checker reports the gap without calling the copy tampered.
    void theBacklogIsBoundedAndDropsBecomeAGap()
    {
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer(), {3, 1U << 20U});
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(1);
        target.refusing = true;
        t.append(5);  // entries 1..5: 1 and 2 are dropped, 3..5 wait
        QCOMPARE(forwarder.backlog(), std::size_t{3});
        target.refusing = false;
        t.append(1);
        QCOMPARE(target.lines.size(), std::size_t{6});  // entry 0, the gap, entries 3..6
        const auto gap = nlohmann::json::parse(target.lines[1]);
        QCOMPARE(gap["type"].get<std::string>(), std::string("gap"));
        QCOMPARE(gap["first"].get<int>(), 1);
        QCOMPARE(gap["last"].get<int>(), 2);
        const auto bundle = exportBundle(*t.log, {}).value();
        const auto check = checkForwarded(target.text(), bundle, trusting(t));
        QVERIFY2(check.errors.empty(), errorsOf(check).c_str());
        QCOMPARE(check.gaps.size(), std::size_t{1});
        QCOMPARE(check.gaps.front(), (std::pair<std::uint64_t, std::uint64_t>{1, 2}));
        QVERIFY(!check.ok());
    }

    // A file is appended to, never truncated: a restarted daemon goes on after the last line.
    void aFileTargetAppendsPrivately()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("audit.jsonl").toStdString();
        TestLog t;
        t.append(3, 3);
        const auto entries = t.store.readEntries(0, 3).value();
        {
            auto first = openForwarder("file:" + path, "sealtrain.test/audit");
            QVERIFY2(first, first ? "" : first.error().message().c_str());
            (*first)->forward(std::span(entries).first(2));
        }
        auto again = openForwarder("file:" + path, "sealtrain.test/audit").value();
        again->forward(std::span(entries).subspan(2));
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
        QTest::newRow("missing folder")
            << "file:/nonexistent-folder/audit.jsonl" << int(ErrorCode::Io);
    }

    void badTargetsAreRefusedWithASentence()
    {
        QFETCH(QString, target);
        QFETCH(int, code);
        auto forwarder = openForwarder(target.toStdString(), "o");
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
        QVERIFY(!openForwarder("journal", "o", dir.filePath("absent.socket").toStdString()));
        auto forwarder = openForwarder("journal", "sealtrain.test/audit", path);
        QVERIFY2(forwarder, forwarder ? "" : forwarder.error().message().c_str());
        TestLog t(1, {0, {}, {}}, std::nullopt, forwarder->get());
        t.append(1);
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(4);
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
        auto forwarder = openForwarder("file:" + linkPath.string(), "sealtrain.test/audit");
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(10, 5);
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(10, 5);
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(4, 4);
        const auto bundle = exportBundle(*t.log, {}).value();
        t.append(4);  // entries 4 to 7: after the bundle's newest signed head
        auto lines = target.lines;
        QCOMPARE(lines.size(), std::size_t{8});
        lines[5] = forgedLine(lines[5]);
        const auto check = checkForwarded(joined(lines), bundle, trusting(t));
        QCOMPARE(check.entriesBeyondBundle, std::uint64_t{4});
        QVERIFY2(errorsOf(check).find("Line 7 of the forwarded copy does not chain to the entry "
                                      "before it")
                     != std::string::npos,
                 errorsOf(check).c_str());
    }

    // audit-forward.md, "Checking a copy" 5: a sequence seen twice holds the same entry; a line
    // replayed as it was passes, another entry under the same number fails (issue #48).
    void aSequenceSeenTwiceHoldsTheSameEntry()
    {
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(10, 5);
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer(), {3, 1U << 20U});
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(1);
        target.refusing = true;
        t.append(5);  // entries 1..5: 1 and 2 are dropped, 3..5 wait
        target.refusing = false;
        t.append(1);
        QCOMPARE(target.lines.size(), std::size_t{6});  // entry 0, the gap, entries 3..6
        const auto bundle = exportBundle(*t.log, {}).value();
        auto lines = target.lines;
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
        Collected target;
        LineForwarder forwarder("sealtrain.test/audit", target.writer());
        TestLog t(1, {0, {}, {}}, std::nullopt, &forwarder);
        t.append(10, 5);
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
