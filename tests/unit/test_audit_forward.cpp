// Audit forwarding (issue #31): committed entries become JSON lines with their sequence and
// leaf hash; a rolled-back transaction forwards nothing; a refusing target keeps a bounded
// backlog and writes a gap line for what it dropped; and the copy is checked against a bundle,
// which catches an edited line, other bytes, a removed line and a line of another log.
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
};

QTEST_APPLESS_MAIN(TestAuditForward)
#include "test_audit_forward.moc"
