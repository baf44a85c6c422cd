// Export bundles: a complete or filtered export verifies; every kind of tampering the issue
// names is caught, with the first bad entry named exactly; the parser is strict.
#include "sealtrain/audit/bundle.h"

#include "audit_fixture.h"
#include "sealtrain/audit/witness.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using namespace sealtrain::audit;
using sealtrain::testing::TestLog;

namespace {

constexpr int kEntries = 30;

std::string joined(const VerifyReport& report)
{
    std::string all;
    for (const auto& e : report.errors)
        all += e + "\n";
    return all;
}

VerifyOptions withKey(const std::string& key)
{
    VerifyOptions options;
    options.trustedKey = key;
    return options;
}

// A log of kEntries entries with heads at 8, 16, 24 and the export head at 30.
struct Exported {
    Exported()
    {
        t.append(kEntries, 8);
        text = *exportBundle(*t.log, {});
        bundle = *parseBundle(text);
        fingerprint = t.signingKey.publicKey().keyId();
    }
    TestLog t;
    std::string text;
    Bundle bundle;
    std::string fingerprint;
};

// Checks that verification failed, that the first bad entry is `sequence` and that an error
// names it; every message must be one sentence.
void expectFirstBad(const VerifyReport& report, std::uint64_t sequence)
{
    QVERIFY2(!report.ok(), "the tampered bundle verified");
    QVERIFY2(report.firstBadEntry.has_value(), joined(report).c_str());
    QCOMPARE(*report.firstBadEntry, sequence);
    const std::string name = "ntry " + std::to_string(sequence);
    bool named = false;
    for (const auto& error : report.errors) {
        QVERIFY2(isOneSentence(error), error.c_str());
        named = named || error.find(name) != std::string::npos;
    }
    QVERIFY2(named, joined(report).c_str());
}

// The log TestLog::append(kEntries, 8) writes, with entry 3 rewritten: heads at 8, 16 and 24.
void rewriteFromEntry3(TestLog& rewritten)
{
    for (int i = 0; i < kEntries; ++i) {
        auto draft = testing::draftNumber(i);
        if (i == 3)
            draft.reason = "nothing to see here";
        auto transaction = rewritten.store.begin();
        if (!rewritten.log->append(*transaction, draft).ok())
            qFatal("cannot append entry %d", i);
        transaction->commit();
        rewritten.clock.advance(std::chrono::seconds{1});
        if ((i + 1) % 8 == 0 && !rewritten.log->signHead().ok())
            qFatal("cannot sign a head");
    }
}

}  // namespace

class TestAuditBundle : public QObject {
    Q_OBJECT

private slots:
    void completeExportVerifies_data()
    {
        QTest::addColumn<QString>("keyForm");
        QTest::newRow("fingerprint") << "fingerprint";
        QTest::newRow("pem") << "pem";
        QTest::newRow("vkey") << "vkey";
    }

    void completeExportVerifies()
    {
        QFETCH(QString, keyForm);
        Exported x;
        std::string key = x.fingerprint;
        if (keyForm == "pem")
            key = x.t.signingKey.publicKey().toPem();
        else if (keyForm == "vkey")
            key = x.t.log->verifier().vkey();
        const auto report = verifyBundle(x.text, withKey(key));
        QVERIFY2(report.ok(), joined(report).c_str());
        QVERIFY(report.warnings.empty());
        QVERIFY(report.keyTrusted);
        QCOMPARE(report.keyId, x.fingerprint);
        QCOMPARE(report.entriesVerified, std::uint64_t{kEntries});
        QCOMPARE(report.entries.size(), std::size_t{kEntries});
        QCOMPARE(report.heads.size(), std::size_t{4});
        QCOMPARE(report.heads.back().size, std::uint64_t{kEntries});
        QVERIFY(report.selectionAll);
        QVERIFY(report.selectionSigned);
        QCOMPARE(report.verdict(), Verdict::Verified);
        QCOMPARE(report.selectionText(), std::string("all"));
        QCOMPARE(x.bundle.consistency.size(), std::size_t{3});
        QVERIFY(x.bundle.statement.has_value());
    }

    // Without a trusted key nothing failed, but nothing ties the bundle to the log either: the
    // verdict is Unconfirmed, never Verified.
    void withoutAKeyItIsUnconfirmed()
    {
        Exported x;
        const auto report = verifyBundle(x.text, {});
        QVERIFY(report.ok());
        QCOMPARE(report.warnings.size(), std::size_t{1});
        QVERIFY(!report.keyTrusted);
        QCOMPARE(report.verdict(), Verdict::Unconfirmed);
    }

    void filteredExportVerifies()
    {
        Exported x;
        ExportFilter filter;
        filter.actor = "alice";
        filter.action = "job.*";
        const auto text = *exportBundle(*x.t.log, filter);
        const auto report = verifyBundle(text, withKey(x.fingerprint));
        QVERIFY2(report.ok(), joined(report).c_str());
        QCOMPARE(report.verdict(), Verdict::Verified);
        QVERIFY(!report.selectionAll);
        QVERIFY(report.selectionSigned);
        QCOMPARE(report.filter, std::string("actor=alice action=job.*"));
        QVERIFY(report.selectionText().starts_with("filtered: actor=alice action=job.* (the "
                                                   "selection was signed"));
        QVERIFY(!report.entries.empty());
        for (const auto& entry : report.entries) {
            QCOMPARE(entry.actor.id, std::string("alice"));
            QVERIFY(entry.action.starts_with("job."));
        }
        QCOMPARE(report.entriesVerified, std::uint64_t{report.entries.size()});
        // The export signed a new head at the same size: the bundle keeps one head per size.
        QCOMPARE(report.heads.size(), std::size_t{4});
    }

    // An export of exactly the entries a compliance report cites: the selection names them as
    // ranges, the log signs it, and deleting any one of them from the bundle fails verification.
    void selectedSequencesVerify()
    {
        Exported x;
        ExportFilter filter;
        filter.sequences = {2, 5, 6, 7, 20};
        const auto text = *exportBundle(*x.t.log, filter);
        const auto report = verifyBundle(text, withKey(x.fingerprint));
        QVERIFY2(report.ok(), joined(report).c_str());
        QCOMPARE(report.verdict(), Verdict::Verified);
        QVERIFY(report.selectionSigned);
        QCOMPARE(report.filter, std::string("sequences=2,5-7,20"));
        QCOMPARE(report.entries.size(), filter.sequences.size());
        for (std::size_t i = 0; i < filter.sequences.size(); ++i)
            QCOMPARE(report.entries[i].sequence, filter.sequences[i]);
        for (std::size_t i = 0; i < filter.sequences.size(); ++i) {
            auto bundle = parseBundle(text);
            QVERIFY(bundle.ok());
            bundle->entries.erase(bundle->entries.begin() + static_cast<std::ptrdiff_t>(i));
            const auto cut = verifyBundle(formatBundle(*bundle), withKey(x.fingerprint));
            QCOMPARE(cut.verdict(), Verdict::Failed);
        }
        filter.sequences = {5, 2};
        QCOMPARE(exportBundle(*x.t.log, filter).error().code(), ErrorCode::InvalidArgument);
        filter.sequences = {2, 2};
        QCOMPARE(exportBundle(*x.t.log, filter).error().code(), ErrorCode::InvalidArgument);
    }

    // A subset cut offline: its entries verify, but nobody with the key signed which entries it
    // left out, so the verdict is Unconfirmed and the selection says so.
    void subsetOfABundleIsUnconfirmed()
    {
        Exported x;
        ExportFilter filter;
        filter.targetKind = "dataset";
        const auto subset = subsetBundle(x.bundle, filter);
        QVERIFY(subset.ok());
        QVERIFY(!subset->selectionAll);
        QVERIFY(!subset->statement.has_value());
        QCOMPARE(subset->entries.size(), std::size_t{(kEntries + 3) / 4});
        const auto report = verifyBundle(formatBundle(*subset), withKey(x.fingerprint));
        QVERIFY2(report.ok(), joined(report).c_str());
        QCOMPARE(report.entriesVerified, std::uint64_t{subset->entries.size()});
        QCOMPARE(report.verdict(), Verdict::Unconfirmed);
        QVERIFY(!report.selectionSigned);
        QVERIFY(report.selectionText().find("not signed") != std::string::npos);
    }

    void formatRoundTrips()
    {
        Exported x;
        QCOMPARE(formatBundle(x.bundle), x.text);
    }

    // A changed byte anywhere in any entry is caught and the entry named.
    void changedByteInAnyEntry()
    {
        Exported x;
        int cases = 0;
        for (std::size_t i = 0; i < x.bundle.entries.size(); ++i) {
            const std::size_t size = x.bundle.entries[i].bytes.size();
            for (std::size_t at = 0; at < size;
                 at += (i % 5 == 0 ? std::size_t{1} : std::size_t{17})) {
                Bundle tampered = x.bundle;
                tampered.entries[i].bytes[at] ^= 0x20;
                const auto report = verifyBundle(formatBundle(tampered), withKey(x.fingerprint));
                expectFirstBad(report, i);
                ++cases;
            }
        }
        QVERIFY(cases > 1000);
    }

    void deletedEntry_data()
    {
        QTest::addColumn<int>("index");
        for (int index : {0, 7, 8, 15, 29})
            QTest::newRow(qPrintable(QString::number(index))) << index;
    }

    void deletedEntry()
    {
        QFETCH(int, index);
        Exported x;
        Bundle tampered = x.bundle;
        tampered.entries.erase(tampered.entries.begin() + index);
        const auto report = verifyBundle(formatBundle(tampered), withKey(x.fingerprint));
        expectFirstBad(report, static_cast<std::uint64_t>(index));
    }

    void swappedEntries_data()
    {
        QTest::addColumn<int>("index");
        for (int index : {0, 7, 12, 28})
            QTest::newRow(qPrintable(QString::number(index))) << index;
    }

    void swappedEntries()
    {
        QFETCH(int, index);
        Exported x;
        Bundle tampered = x.bundle;
        std::swap(tampered.entries[static_cast<std::size_t>(index)],
                  tampered.entries[static_cast<std::size_t>(index) + 1]);
        const auto report = verifyBundle(formatBundle(tampered), withKey(x.fingerprint));
        expectFirstBad(report, static_cast<std::uint64_t>(index));
        // Swapping the bytes but keeping the line numbers is caught as well.
        Bundle swappedBytes = x.bundle;
        std::swap(swappedBytes.entries[static_cast<std::size_t>(index)].bytes,
                  swappedBytes.entries[static_cast<std::size_t>(index) + 1].bytes);
        expectFirstBad(verifyBundle(formatBundle(swappedBytes), withKey(x.fingerprint)),
                       static_cast<std::uint64_t>(index));
    }

    void tailCutBehindASignedHead()
    {
        Exported x;
        Bundle tampered = x.bundle;
        tampered.entries.resize(kEntries - 3);
        const auto report = verifyBundle(formatBundle(tampered), withKey(x.fingerprint));
        expectFirstBad(report, kEntries - 3);
        QVERIFY(joined(report).find("tail was cut") != std::string::npos);
    }

    void headResignedWithAnotherKey()
    {
        Exported x;
        const auto other = testing::signingKeyFromByte(2);
        Bundle tampered = x.bundle;
        for (auto& note : tampered.heads) {
            const auto head = *parseTreeHeadText(parseSignedNote(note)->text);
            note = signTreeHead(head, other);
        }
        tampered.keys = {NoteVerifier{x.bundle.origin, other.publicKey()}};
        const auto statement =
            *parseSelectionStatementText(parseSignedNote(*x.bundle.statement)->text);
        tampered.statement = signSelectionStatement(statement, other);
        const std::string text = formatBundle(tampered);
        // Self-consistent, so only the reviewer's key tells.
        const auto selfConsistent = verifyBundle(text, {});
        QVERIFY2(selfConsistent.ok(), joined(selfConsistent).c_str());
        QCOMPARE(selfConsistent.verdict(), Verdict::Unconfirmed);
        const auto byFingerprint = verifyBundle(text, withKey(x.fingerprint));
        QVERIFY(!byFingerprint.ok());
        QVERIFY(joined(byFingerprint).find("do not trust") != std::string::npos);
        const auto byPem = verifyBundle(text, withKey(x.t.signingKey.publicKey().toPem()));
        QVERIFY(!byPem.ok());
        QVERIFY(joined(byPem).find("another key") != std::string::npos);
    }

    void forgedSignature()
    {
        Exported x;
        Bundle tampered = x.bundle;
        auto note = *parseSignedNote(tampered.heads[1]);
        note.signatures[0].signature[3] ^= 0x04;
        tampered.heads[1] = formatSignedNote(note);
        for (const auto& options : {VerifyOptions{}, withKey(x.fingerprint)}) {
            const auto report = verifyBundle(formatBundle(tampered), options);
            QVERIFY(!report.ok());
            QVERIFY2(joined(report).find("size 16") != std::string::npos
                         && joined(report).find("forged") != std::string::npos,
                     joined(report).c_str());
        }
    }

    // The operator rewrites entry 3 and rebuilds the whole log, heads and all; the bundle is
    // self-consistent, but the heads published to the witness file tell.
    void rewrittenLogCaughtByTheWitness_data()
    {
        QTest::addColumn<bool>("freshKey");
        QTest::newRow("fresh key") << true;
        QTest::newRow("stolen key") << false;
    }

    void rewrittenLogCaughtByTheWitness()
    {
        QFETCH(bool, freshKey);
        QTemporaryDir dir;
        const std::filesystem::path witness = dir.filePath("witness").toStdString();
        TestLog original(1, HeadPolicy{0, {}, {}}, witness);
        original.append(kEntries, 8);
        QVERIFY(exportBundle(*original.log, {}).ok());

        TestLog rewritten(freshKey ? 3 : 1);
        rewriteFromEntry3(rewritten);
        const auto text = *exportBundle(*rewritten.log, {});
        QVERIFY(verifyBundle(text, {}).ok());

        VerifyOptions options;
        options.witnessHeads = *readWitness(witness);
        const auto report = verifyBundle(text, options);
        QVERIFY(!report.ok());
        const std::string all = joined(report);
        if (freshKey) {
            QVERIFY2(all.find("witness file") != std::string::npos, all.c_str());
        } else {
            QVERIFY2(all.find("rewritten") != std::string::npos, all.c_str());
            QCOMPARE(*report.firstBadEntry, std::uint64_t{0});  // the witness has no head < 8
            QVERIFY(all.find("from 0 to 7") != std::string::npos);
        }
        // The original bundle agrees with its witness.
        VerifyOptions good = withKey(original.signingKey.publicKey().keyId());
        good.witnessHeads = options.witnessHeads;
        const auto originalReport = verifyBundle(*exportBundle(*original.log, {}), good);
        QVERIFY2(originalReport.ok(), joined(originalReport).c_str());
        QCOMPARE(originalReport.witnessHeadsChecked, std::uint64_t{4});  // 8, 16, 24, 30
    }

    // Issue #27, item 25: an insider with the key rewrites entry 3 after the head at 8 was
    // signed, then signs heads over the rewritten log. A filtered bundle of one later entry,
    // whose own proofs all hold, still fails: nothing proves the head at 8 (signed before the
    // rewrite) consistent with the next.
    void rewriteBetweenHeadsFailsAFilteredBundle()
    {
        TestLog original;
        original.append(kEntries, 8);
        TestLog rewritten;
        rewriteFromEntry3(rewritten);
        ExportFilter filter;
        filter.targetKind = "job";
        filter.targetId = "id-21";
        const std::string fingerprint = original.signingKey.publicKey().keyId();
        const auto firstHead = [](const std::string& text) {
            const auto at = text.find("\nhead ") + 1;
            return std::make_pair(at, text.find('\n', at) - at);
        };
        const std::string before = *exportBundle(*original.log, filter);
        std::string text = *exportBundle(*rewritten.log, filter);
        QVERIFY(verifyBundle(text, withKey(fingerprint)).ok());  // self-consistent as it is
        const auto [at, length] = firstHead(text);
        const auto [beforeAt, beforeLength] = firstHead(before);
        const std::string signedBefore = before.substr(beforeAt, beforeLength);
        QVERIFY(text.substr(at, length) != signedBefore);
        text.replace(at, length, signedBefore);
        const auto report = verifyBundle(text, withKey(fingerprint));
        QVERIFY(!report.ok());
        QCOMPARE(report.verdict(), Verdict::Failed);
        const std::string all = joined(report);
        QVERIFY2(all.find("sizes 8 and 16 are not consistent") != std::string::npos, all.c_str());
    }

    void rollbackCaughtByTheWitness()
    {
        QTemporaryDir dir;
        const std::filesystem::path witness = dir.filePath("witness").toStdString();
        TestLog t(1, HeadPolicy{0, {}, {}}, witness);
        t.append(10, 5);
        // A copy of the database taken now...
        MemoryStore backup;
        {
            auto transaction = backup.begin();
            const auto entries = t.store.readEntries(0, 100);
            for (const auto& e : *entries)
                QVERIFY(backup.appendEntry(*transaction, e).ok());
            transaction->commit();
            const auto heads = t.store.readHeads();
            for (const auto& h : *heads)
                QVERIFY(backup.appendHead(h).ok());
        }
        t.append(10, 5);
        // ...is restored later: its export verifies on its own, not against the witness.
        auto restored = AuditLog::open(backup, t.signingKey, &t.auditKey, t.clock,
                                       {"sealtrain.test/audit", {}, {}});
        QVERIFY(restored.ok());
        const auto text = *exportBundle(**restored, {});
        VerifyOptions options = withKey(t.signingKey.publicKey().keyId());
        QVERIFY(verifyBundle(text, options).ok());
        options.witnessHeads = *readWitness(witness);
        const auto report = verifyBundle(text, options);
        QVERIFY(!report.ok());
        QVERIFY2(joined(report).find("rolled back") != std::string::npos, joined(report).c_str());
    }

    // Entries beyond the newest signed head carry no proof. Added to an export they break its
    // signed selection; in a bundle without one the verdict is Unconfirmed, never Verified.
    void unsignedTailIsUnconfirmed()
    {
        Exported x;
        x.t.append(2);  // no head signed for these
        Bundle extended = x.bundle;
        const auto tail = x.t.store.readEntries(kEntries, 2);
        for (const auto& stored : *tail)
            extended.entries.push_back({stored.sequence, std::nullopt, stored.bytes, {}, 0});
        const auto signedReport = verifyBundle(formatBundle(extended), withKey(x.fingerprint));
        QCOMPARE(signedReport.verdict(), Verdict::Failed);
        QVERIFY2(joined(signedReport).find("32 entries but the log exported 30")
                     != std::string::npos,
                 joined(signedReport).c_str());

        extended.statement.reset();
        const auto report = verifyBundle(formatBundle(extended), withKey(x.fingerprint));
        QVERIFY2(report.ok(), joined(report).c_str());
        QCOMPARE(report.verdict(), Verdict::Unconfirmed);
        QCOMPARE(report.warnings.size(), std::size_t{1});
        QVERIFY(report.warnings[0].find("30 to 31") != std::string::npos);
        QCOMPARE(report.entriesVerified, std::uint64_t{kEntries});
    }

    // Issue #13's attack: ten entries deleted from a complete export, the selection line left as
    // "all" or relabelled "filtered" (with the filter line left as "all", or edited), or the
    // statement dropped as in a version 1 bundle. Never Verified, and never called "all".
    void tenDeletedEntries_data()
    {
        QTest::addColumn<QString>("edit");
        QTest::addColumn<int>("verdict");
        QTest::newRow("selection left all") << "none" << static_cast<int>(Verdict::Failed);
        QTest::newRow("selection filtered, filter all")
            << "selection" << static_cast<int>(Verdict::Failed);
        QTest::newRow("selection filtered, filter edited")
            << "selection and filter" << static_cast<int>(Verdict::Failed);
        QTest::newRow("statement dropped, version 1")
            << "version 1" << static_cast<int>(Verdict::Unconfirmed);
    }

    void tenDeletedEntries()
    {
        QFETCH(QString, edit);
        QFETCH(int, verdict);
        Exported x;
        Bundle tampered = x.bundle;
        tampered.entries.erase(tampered.entries.begin() + 10, tampered.entries.begin() + 20);
        if (edit != "none")
            tampered.selectionAll = false;
        if (edit == "selection and filter" || edit == "version 1")
            tampered.filter = "actor=alice";
        if (edit == "version 1") {
            tampered.version = 1;
            tampered.statement.reset();
        }
        const auto report = verifyBundle(formatBundle(tampered), withKey(x.fingerprint));
        QCOMPARE(static_cast<int>(report.verdict()), verdict);
        QVERIFY2(!report.selectionText().starts_with("all"), report.selectionText().c_str());
        if (edit == "none")
            expectFirstBad(report, 10);
        if (edit == "selection")
            QVERIFY2(joined(report).find("filtered with the filter all") != std::string::npos,
                     joined(report).c_str());
        if (edit == "selection and filter")
            QVERIFY2(joined(report).find("signed the selection 'all'") != std::string::npos,
                     joined(report).c_str());
        if (edit == "version 1")
            QVERIFY(report.selectionText().find("not signed") != std::string::npos);
    }

    // The filter line of a filtered export is edited to claim another selection.
    void editedFilterTextIsDetected()
    {
        Exported x;
        ExportFilter filter;
        filter.actor = "alice";
        auto tampered = *parseBundle(*exportBundle(*x.t.log, filter));
        tampered.filter = "actor=alice action=job.approve";
        const auto report = verifyBundle(formatBundle(tampered), withKey(x.fingerprint));
        QCOMPARE(report.verdict(), Verdict::Failed);
        QVERIFY2(joined(report).find("signed the selection 'actor=alice'") != std::string::npos,
                 joined(report).c_str());
    }

    // A statement signed for an earlier export is put into a later bundle.
    void replayedStatementIsRefused()
    {
        Exported x;
        x.t.append(4);
        auto later = *parseBundle(*exportBundle(*x.t.log, {}));
        later.statement = x.bundle.statement;
        const auto report = verifyBundle(formatBundle(later), withKey(x.fingerprint));
        QCOMPARE(report.verdict(), Verdict::Failed);
        QVERIFY2(joined(report).find("signed for the head at size 30") != std::string::npos,
                 joined(report).c_str());
    }

    void forgedStatementIsRefused()
    {
        Exported x;
        Bundle tampered = x.bundle;
        auto note = *parseSignedNote(*tampered.statement);
        note.signatures[0].signature[7] ^= 0x01;
        tampered.statement = formatSignedNote(note);
        const auto report = verifyBundle(formatBundle(tampered), withKey(x.fingerprint));
        QCOMPARE(report.verdict(), Verdict::Failed);
        QVERIFY2(joined(report).find("selection statement") != std::string::npos,
                 joined(report).c_str());
    }

    // A version 1 bundle (no statement) is still read: a complete one is proven complete by its
    // roots, a filtered one is Unconfirmed.
    void version1Bundles()
    {
        Exported x;
        Bundle old = x.bundle;
        old.version = 1;
        old.statement.reset();
        const std::string text = formatBundle(old);
        QVERIFY(text.starts_with("sealtrain-audit-bundle 1\n"));
        const auto complete = verifyBundle(text, withKey(x.fingerprint));
        QCOMPARE(complete.verdict(), Verdict::Verified);
        QVERIFY(!complete.selectionSigned);
        QCOMPARE(complete.selectionText(), std::string("all"));

        ExportFilter filter;
        filter.actor = "bob";
        auto filtered = *subsetBundle(old, filter);
        const auto report = verifyBundle(formatBundle(filtered), withKey(x.fingerprint));
        QCOMPARE(report.verdict(), Verdict::Unconfirmed);
        QCOMPARE(report.entriesVerified, std::uint64_t{filtered.entries.size()});
    }

    // A complete bundle is proven by its recomputed roots, so its proofs are not re-hashed; each
    // proof character is still checked, and refused exactly where parseBundle refuses it.
    void malformedProofInACompleteBundle()
    {
        Exported x;
        const auto line = x.text.find("\nentry 5 ") + 1;  // three hashes, under the head at 8
        const auto proof =
            x.text.find(' ', x.text.find(' ', x.text.find(' ', line + 6) + 1) + 1) + 1;
        int cases = 0;
        for (std::size_t at = proof; at < proof + std::size_t{2} * 45; ++at) {
            for (const char bad : {'*', '=', '-', '_', '.', '~', '\x80', '\xff', 'B'}) {
                std::string text = x.text;
                const bool lastDigit = (at - proof) % 45 == 42;
                if (text[at] == ' ' || text[at] == bad || (bad == 'B' && !lastDigit))
                    continue;
                text[at] = bad;
                QVERIFY2(!parseBundle(text).ok(), text.substr(line, 200).c_str());
                QVERIFY2(!verifyBundle(text, withKey(x.fingerprint)).ok(),
                         text.substr(line, 200).c_str());
                ++cases;
            }
        }
        QVERIFY(cases > 600);
    }

    void strictParsing_data()
    {
        QTest::addColumn<QString>("edit");
        for (const char* edit :
             {"crlf", "no end", "text after end", "double space", "bad magic", "trailing space",
              "short hash", "unknown line", "no final newline", "entry before head", "leading zero",
              "bad proof digit", "statement after key"})
            QTest::newRow(edit) << edit;
    }

    void strictParsing()
    {
        QFETCH(QString, edit);
        Exported x;
        std::string text = x.text;
        const auto firstEntry = text.find("\nentry ") + 1;
        if (edit == "crlf")
            text.insert(text.find('\n'), "\r");
        else if (edit == "no end")
            text.erase(text.size() - 4);
        else if (edit == "text after end")
            text += "entry 1\n";
        else if (edit == "double space")
            text.insert(firstEntry + 5, " ");
        else if (edit == "bad magic")
            text[text.find(' ') + 1] = '3';
        else if (edit == "trailing space")
            text.insert(text.find('\n', firstEntry), " ");
        else if (edit == "short hash")
            text.insert(text.find('\n', firstEntry), " AAAA");
        else if (edit == "unknown line")
            text.insert(firstEntry, "comment hello\n");
        else if (edit == "no final newline")
            text.pop_back();
        else if (edit == "entry before head")
            text.insert(text.find("\nhead ") + 1,
                        text.substr(firstEntry, text.find('\n', firstEntry) + 1 - firstEntry));
        else if (edit == "leading zero")
            text.insert(firstEntry + 6, "0");
        else if (edit == "bad proof digit")
            text[text.find(' ', text.find(' ', text.find(' ', firstEntry + 6) + 1) + 1) + 5] = '*';
        else if (edit == "statement after key") {
            const auto statement = text.find("\nstatement ") + 1;
            const auto line = text.substr(statement, text.find('\n', statement) + 1 - statement);
            text.erase(statement, line.size());
            text.insert(text.find("\nhead ") + 1, line);
        }
        QVERIFY(!parseBundle(text).ok());
        const auto report = verifyBundle(text, withKey(x.fingerprint));
        QVERIFY(!report.ok());
        QVERIFY2(isOneSentence(report.errors.front()), report.errors.front().c_str());
    }
};

QTEST_APPLESS_MAIN(TestAuditBundle)
#include "test_audit_bundle.moc"
