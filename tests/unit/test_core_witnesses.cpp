// Witnesses outside the data directory (issue #49, docs/operations/data-directory.md,
// "Witnesses"): a copy of the whole directory put back in its place, its own audit.witness with
// it, is refused by a witness file on another path and by a TPM counter (a software TPM, swtpm);
// a witness that lost what it kept is refused, and accepting the loss is audited; a witness the
// database does not record, but which holds heads, shows a directory from before it was attached.
#include "core_fixture.h"
#include "data_directory_fixture.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/audit/tpm_counter_witness.h"
#include "sealtrain/audit/witness.h"
#include "sealtrain/core/audit/queries.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/crypto/signing.h"

#include <QtTest/QtTest>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace sealtrain;
using testing::secret;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPassphrase = "a long passphrase for the witness tests";
constexpr const char* kPassword = "a long password for the witness tests";
constexpr const char* kCounter = "0x01500016";

bool portFree(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    return free;
}

// A software TPM (swtpm) serving on two free loopback ports, stopped when this goes.
class SoftwareTpm final {
public:
    explicit SoftwareTpm(const QString& stateDir)
    {
        std::mt19937 random(std::random_device{}());
        for (int attempt = 0; attempt < 20 && !process_.isOpen(); ++attempt) {
            const int port = std::uniform_int_distribution<int>(20000, 40000)(random);
            if (!portFree(port) || !portFree(port + 1))
                continue;
            process_.start("swtpm", {"socket", "--tpm2", "--tpmstate", "dir=" + stateDir,
                                     "--server", QString("type=tcp,port=%1").arg(port), "--ctrl",
                                     QString("type=tcp,port=%1").arg(port + 1), "--flags",
                                     "not-need-init,startup-clear"});
            if (!process_.waitForStarted(5000))
                return;
            // Ready once it answers: reading an index that is not there says NotFound.
            tcti_ = "swtpm:host=127.0.0.1,port=" + std::to_string(port);
            for (int tries = 0; tries < 50; ++tries) {
                auto read = audit::readTpmCounter(
                    audit::parseTpmCounterLocation(std::string(kCounter) + "@" + tcti_).value());
                if (!read && read.error().code() == ErrorCode::NotFound)
                    return;
                if (process_.state() != QProcess::Running)
                    break;
                QThread::msleep(100);
            }
            process_.kill();
            process_.waitForFinished();
            tcti_.clear();
        }
    }
    SoftwareTpm(const SoftwareTpm&) = delete;
    SoftwareTpm& operator=(const SoftwareTpm&) = delete;
    ~SoftwareTpm()
    {
        process_.terminate();
        if (!process_.waitForFinished(5000))
            process_.kill();
        process_.waitForFinished();
    }
    [[nodiscard]] bool running() const { return !tcti_.empty(); }
    [[nodiscard]] const std::string& tcti() const { return tcti_; }
    [[nodiscard]] std::string witness(const std::string& index = kCounter) const
    {
        return "tpm:" + index + "@" + tcti_;
    }

private:
    QProcess process_;
    std::string tcti_;
};

void copyDirectory(const fs::path& from, const fs::path& to)
{
    fs::remove_all(to);
    fs::copy(from, to, fs::copy_options::recursive);
}

}  // namespace

class TestCoreWitnesses : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::TestClock clock_;
    int created_ = 0;
    fs::path tpmOwnerAuthFile_;  // given to every open while set

    fs::path at(const std::string& name) const
    {
        return fs::path(tmp_.path().toStdString()) / name;
    }

    [[nodiscard]] core::DataDirectoryOptions options(std::vector<std::string> witnesses = {},
                                                     bool acceptLoss = false,
                                                     std::vector<std::string> detached = {})
    {
        core::DataDirectoryOptions options;
        options.clock = &clock_;
        options.auditWitnesses = std::move(witnesses);
        options.acceptWitnessLoss = acceptLoss;
        options.detachWitnesses = std::move(detached);
        options.tpmOwnerAuthFile = tpmOwnerAuthFile_;
        return options;
    }

    fs::path create(const std::string& name, const std::vector<std::string>& witnesses = {})
    {
        core::NewDataDirectory request;
        request.path = at(name);
        request.passphrase = secret(kPassphrase);
        request.argon2 = crypto::kArgon2Floor;
        request.adminName = "alice";
        request.adminPassword = secret(kPassword);
        auto created = core::DataDirectory::create(request, options(witnesses));
        if (!created)
            qFatal("create: %s", created.error().message().c_str());
        return request.path;
    }

    Result<std::unique_ptr<core::DataDirectory>>
    open(const fs::path& path, const std::vector<std::string>& witnesses = {},
         bool acceptLoss = false, const std::vector<std::string>& detached = {})
    {
        return core::DataDirectory::open(path, testing::unlockWith(kPassphrase),
                                         options(witnesses, acceptLoss, detached));
    }

    // Something audited happens and a head is signed over it (a change the rollback would undo).
    void change(const fs::path& path, const std::vector<std::string>& witnesses = {})
    {
        auto directory = open(path, witnesses);
        QVERIFY2(directory.ok(), directory.ok() ? "" : directory.error().message().c_str());
        clock_.advance(std::chrono::seconds{60});
        QVERIFY((*directory)->controlPlane().recordPlatformChange("platform.test", {}).ok());
        QVERIFY((*directory)->signPendingEntries().ok());
    }

    // The whole directory, witness file and all, copied; the platform goes on; the copy is put
    // back in its place. Returns the error of opening it (or nothing when it opened).
    std::optional<Error> rollBack(const std::string& name,
                                  const std::vector<std::string>& witnesses)
    {
        const auto path = create(name, witnesses);
        change(path);
        copyDirectory(path, at(name + ".copy"));
        change(path);
        change(path);
        copyDirectory(at(name + ".copy"), path);
        auto reopened = open(path, witnesses);
        if (reopened)
            return std::nullopt;
        return reopened.error();
    }

private slots:
    // Issue #49: an operator detaches a recorded witness at a start (--detach-audit-witness):
    // only one the directory records, never one also kept, and only once it agreed with the log
    // (a whole-directory rollback is still caught when its witness is asked to be detached);
    // audited, and from then on the witness is neither given heads nor checked.
    void aRecordedWitnessIsDetachedOnlyOnceItAgrees()
    {
        const fs::path file = at("detached-outside.witness");
        const std::string witness = "file:" + file.string();
        const auto path = create("detached", {witness});
        change(path);
        const auto lines = [&] {
            std::ifstream in(file);
            return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(),
                              '\n');
        };
        QVERIFY(lines() >= 1);

        const std::string stranger = "file:" + at("never-attached.witness").string();
        auto unknown = open(path, {}, false, {stranger});
        QVERIFY(!unknown);
        QCOMPARE(unknown.error().code(), ErrorCode::NotFound);
        QVERIFY(isOneSentence(unknown.error().message()));
        auto both = open(path, {witness}, false, {witness});
        QVERIFY(!both);
        QCOMPARE(both.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(both.error().message()));

        // A copy of the whole directory from before two more heads: asking to detach the
        // witness does not let it open, since the witness is checked first.
        copyDirectory(path, at("detached.copy"));
        change(path);
        change(path);
        auto rolledBack = open(at("detached.copy"), {}, false, {witness});
        QVERIFY(!rolledBack);
        QCOMPARE(rolledBack.error().code(), ErrorCode::Integrity);

        const auto held = lines();
        {
            auto detached = open(path, {}, false, {witness});
            QVERIFY2(detached, detached ? "" : detached.error().message().c_str());
            auto& log = (*detached)->controlPlane().auditLog();
            auto stored = log.store().readEntries(log.size() - 1, 1);
            QVERIFY(stored);
            const auto entry = audit::decodeEntry(stored->front().bytes).value();
            QCOMPARE(entry.action, std::string("audit.witness_detach"));
            QCOMPARE(testing::detailOf(entry, "witness"), witness);
            QCOMPARE(testing::detailOf(entry, "reason"), std::string("operator"));
            // From the detach on, within this open too, no head goes to it.
            const auto atDetach = lines();
            QVERIFY(atDetach >= held);
            clock_.advance(std::chrono::seconds{60});
            QVERIFY((*detached)->controlPlane().recordPlatformChange("platform.test", {}).ok());
            QVERIFY((*detached)->signPendingEntries().ok());
            QCOMPARE(lines(), atDetach);
        }
        const auto afterwards = lines();
        change(path);
        QCOMPARE(lines(), afterwards);  // nor at the next open
        fs::remove(file);               // nor checked
        auto opened = open(path);
        QVERIFY2(opened, opened ? "" : opened.error().message().c_str());
    }

    // Without a witness outside it, the directory's own witness travels with it: the rollback
    // goes unnoticed (which is why the compliance report fails 164.312(b) without one).
    void aWholeDirectoryRollbackIsUnnoticedWithoutAnOutsideWitness()
    {
        QVERIFY(!rollBack("alone", {}).has_value());
    }

    // A witness file on another path keeps the heads the copy does not have: refused, with the
    // database's record of the witness (the option need not even be given again).
    void aWholeDirectoryRollbackIsCaughtByAWitnessFileOutsideIt()
    {
        const std::string witness = "file:" + at("outside.witness").string();
        const auto refused = rollBack("filed", {witness});
        QVERIFY(refused.has_value());
        QCOMPARE(refused->code(), ErrorCode::Integrity);
        QVERIFY2(refused->message().find("older copy") != std::string::npos,
                 refused->message().c_str());
        QCOMPARE(refused->reasonCode(), audit::kAhead.name());
        QVERIFY(isOneSentence(refused->message()));
        auto again = open(at("filed"));
        QVERIFY(!again.ok());
        QVERIFY(again.error().message().find("older copy") != std::string::npos);
    }

    // The same rollback against a TPM counter (swtpm): the counter cannot be turned back.
    void aWholeDirectoryRollbackIsCaughtByATpmCounter()
    {
        QTemporaryDir state;
        SoftwareTpm tpm(state.path());
        if (!tpm.running())
            QSKIP("swtpm is not installed or did not start (scripts/setup installs it)");
        const auto refused = rollBack("counted", {tpm.witness()});
        QVERIFY(refused.has_value());
        QCOMPARE(refused->code(), ErrorCode::Integrity);
        QVERIFY2(refused->message().find("has counted") != std::string::npos,
                 refused->message().c_str());
        QVERIFY2(refused->message().find("older copy") != std::string::npos,
                 refused->message().c_str());

        // The newest directory itself opens, again and again: the counter keeps pace with it.
        const auto path = create("counted-live", {tpm.witness("0x01500017")});
        change(path);
        change(path);
        auto opened = open(path);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message().c_str());
        QCOMPARE((*opened)->witnessesOutside().size(), std::size_t{1});
    }

    // The counter's rule (docs/formats/audit.md, "TPM counter"): ahead of the store's heads is
    // an older copy, refused; a few behind (a crash between storing a head and counting it) is
    // brought level; more than 16 behind is another TPM or an index defined anew, refused.
    // Issue #49: a TPM whose administrator set an owner password: the counter is defined, read
    // and incremented only with it (--audit-witness-tpm-owner-file), which must be readable by
    // its owner alone; without it the start is refused in one sentence that says what to give.
    void aTpmOwnerPasswordIsGivenFromAFile()
    {
        QTemporaryDir state;
        SoftwareTpm tpm(state.path());
        if (!tpm.running())
            QSKIP("swtpm is not installed or did not start (scripts/setup installs it)");
        QProcess owner;
        owner.start("tpm2_changeauth",
                    {"-T", QString::fromStdString(tpm.tcti()), "-c", "owner", "an owner password"});
        if (!owner.waitForStarted(5000))
            QSKIP("tpm2_changeauth is not installed (scripts/setup installs tpm2-tools)");
        QVERIFY(owner.waitForFinished(30000));
        QVERIFY2(owner.exitCode() == 0, owner.readAllStandardError().constData());

        const std::string witness = tpm.witness("0x01500019");
        const auto path = create("owned");
        auto refused = open(path, {witness});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
        QVERIFY2(refused.error().message().find("--audit-witness-tpm-owner-file")
                     != std::string::npos,
                 refused.error().message().c_str());
        QVERIFY(isOneSentence(refused.error().message()));

        const fs::path file = at("owner-password");
        std::ofstream(file) << "an owner password\n";
        fs::permissions(file,
                        fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
        tpmOwnerAuthFile_ = file;
        auto shared = open(path, {witness});
        QVERIFY(!shared);
        QCOMPARE(shared.error().code(), ErrorCode::PermissionDenied);
        QVERIFY2(shared.error().message().find("chmod 600") != std::string::npos,
                 shared.error().message().c_str());

        fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
        change(path, {witness});  // attached, then counted
        change(path);
        auto opened = open(path);
        QVERIFY2(opened, opened ? "" : opened.error().message().c_str());
        opened->reset();

        // The counter is read at every open: without the password the directory does not open.
        tpmOwnerAuthFile_.clear();
        auto without = open(path);
        QVERIFY(!without);
        QCOMPARE(without.error().code(), ErrorCode::PermissionDenied);
    }

    void aTpmCounterIsComparedWithTheStoredHeads()
    {
        QTemporaryDir state;
        SoftwareTpm tpm(state.path());
        if (!tpm.running())
            QSKIP("swtpm is not installed or did not start (scripts/setup installs it)");
        const auto where =
            audit::parseTpmCounterLocation(tpm.witness("0x01500018").substr(4)).value();
        const std::uint64_t value = audit::defineTpmCounter(where).value();
        const audit::MerkleTree tree;
        const auto key = crypto::SigningKey::generate().value();
        const audit::NoteVerifier verifier{"sealtrain.test/audit", key.publicKey()};
        const auto base = static_cast<std::int64_t>(value) - 10;  // counted: 10 heads

        audit::TpmCounterWitness ahead(where, base);
        const auto older = ahead.check({tree, 9, verifier});
        QVERIFY(!older);
        QCOMPARE(older.error().reasonCode(), audit::kAhead.name());

        audit::TpmCounterWitness behind(where, base);
        QVERIFY(behind.check({tree, 12, verifier}).ok());
        QCOMPARE(audit::readTpmCounter(where).value(), value + 2);

        audit::TpmCounterWitness another(where, base);
        const auto far = another.check({tree, 12 + 17, verifier});
        QVERIFY(!far);
        QCOMPARE(far.error().reasonCode(), audit::kBehind.name());
        QCOMPARE(audit::readTpmCounter(where).value(), value + 2);
    }

    // A witness that kept heads and is now missing or empty is refused, not warned about: the
    // directory's own audit.witness and one outside it alike.
    void aMissingOrEmptyWitnessIsRefused_data()
    {
        QTest::addColumn<bool>("outside");
        QTest::addColumn<bool>("empty");
        QTest::newRow("own witness missing") << false << false;
        QTest::newRow("own witness empty") << false << true;
        QTest::newRow("outside witness missing") << true << false;
        QTest::newRow("outside witness empty") << true << true;
    }

    void aMissingOrEmptyWitnessIsRefused()
    {
        QFETCH(bool, outside);
        QFETCH(bool, empty);
        const std::string name = std::string("lost-") + QTest::currentDataTag();
        const auto file = at(name + ".witness");
        const auto path = create(name, {"file:" + file.string()});
        change(path);
        const auto lost = outside ? file : path / core::datadir::kWitness;
        fs::remove(lost);
        if (empty)
            QVERIFY(QFile(QString::fromStdString(lost.string())).open(QIODevice::WriteOnly));
        auto refused = open(path);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::Integrity);
        QVERIFY2(refused.error().message().find(empty ? "is empty" : "is missing")
                     != std::string::npos,
                 refused.error().message().c_str());
        QVERIFY(refused.error().message().find(lost.string()) != std::string::npos);

        // Accepting the loss opens it, audited with what was found; the witness starts again.
        auto accepted = open(path, {}, true);
        QVERIFY2(accepted.ok(), accepted.ok() ? "" : accepted.error().message().c_str());
        const auto resets = testing::entriesWithAction(**accepted, "audit.witness_reset");
        QCOMPARE(resets.size(), std::size_t{1});
        QCOMPARE(resets.front().actor.kind, audit::ActorKind::System);
        QCOMPARE(testing::detailOf(resets.front(), "witness"), "file:" + lost.string());
        QCOMPARE(testing::detailOf(resets.front(), "found"),
                 std::string(empty ? "witness_empty" : "witness_missing"));
        accepted->reset();
        auto reopened = open(path);
        QVERIFY2(reopened.ok(), reopened.ok() ? "" : reopened.error().message().c_str());
    }

    // A rollback accepted: the witness that holds the newer heads is kept aside (evidence of
    // what was lost), the reset is audited, and the directory then opens as it is.
    void acceptingARollbackKeepsTheWitnessAside()
    {
        const std::string witness = "file:" + at("aside.witness").string();
        QVERIFY(rollBack("aside", {witness}).has_value());
        auto accepted = open(at("aside"), {}, true);
        QVERIFY2(accepted.ok(), accepted.ok() ? "" : accepted.error().message().c_str());
        const auto resets = testing::entriesWithAction(**accepted, "audit.witness_reset");
        QCOMPARE(resets.size(), std::size_t{1});
        QCOMPARE(testing::detailOf(resets.front(), "found"), std::string("witness_ahead"));
        const std::string aside = testing::detailOf(resets.front(), "kept_aside");
        QVERIFY(aside.starts_with(at("aside.witness").string() + ".lost-"));
        QVERIFY(audit::readWitness(aside).value().size() >= 3);
        accepted->reset();
        QVERIFY(open(at("aside")).ok());
    }

    // Attaching is audited and recorded; a witness file that already holds heads the database
    // does not record shows a directory copied from before it was attached: refused.
    void aWitnessHoldingHeadsTheDirectoryDoesNotRecordIsRefused()
    {
        const auto path = create("late");
        copyDirectory(path, at("late.copy"));
        const std::string witness = "file:" + at("late.witness").string();
        change(path, {witness});
        {
            auto opened = open(path);
            QVERIFY(opened.ok());
            const auto attached = testing::entriesWithAction(**opened, "audit.witness_attach");
            QCOMPARE(attached.size(), std::size_t{1});
            QCOMPARE(testing::detailOf(attached.front(), "witness"), witness);
            QCOMPARE((*opened)->witnessesOutside(), std::vector<std::string>{witness});
        }
        change(path, {witness});
        copyDirectory(at("late.copy"), path);
        auto refused = open(path, {witness});
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::FailedPrecondition);
        QVERIFY2(refused.error().message().find("does not record") != std::string::npos,
                 refused.error().message().c_str());
    }

    // A witness file whose heads all agree with the log (the same file named to a copy that
    // lost nothing, a restore without loss) is adopted, audited as such.
    void aWitnessThatAgreesWithTheLogIsAdopted()
    {
        const auto path = create("agreeing");
        change(path);
        copyDirectory(path, at("agreeing.copy"));
        const std::string witness = "file:" + at("agreeing.witness").string();
        QVERIFY(open(path, {witness}).ok());
        auto adopted = open(at("agreeing.copy"), {witness});
        QVERIFY2(adopted.ok(), adopted.ok() ? "" : adopted.error().message().c_str());
        const auto attached = testing::entriesWithAction(**adopted, "audit.witness_attach");
        QCOMPARE(attached.size(), std::size_t{1});
        QCOMPARE(testing::detailOf(attached.front(), "adopted"), std::string("yes"));
    }

    // A restore opens what it built without the old platform's witnesses (its --witness rule
    // stands for them) and forgets them, audited; the restored directory then opens without
    // them, and its own configuration attaches witnesses anew.
    void aRestoreDetachesTheWitnessesItsDatabaseRecords()
    {
        const std::string witness = "file:" + at("restored.witness").string();
        QVERIFY(rollBack("restored", {witness}).has_value());
        auto options = this->options();
        options.restoring = true;
        auto restoring =
            core::DataDirectory::open(at("restored"), testing::unlockWith(kPassphrase), options);
        QVERIFY2(restoring.ok(), restoring.ok() ? "" : restoring.error().message().c_str());
        QVERIFY((*restoring)->witnessesOutside().empty());
        const auto detached = (*restoring)->detachRecordedWitnesses();
        QVERIFY(detached.ok());
        QCOMPARE(*detached, std::vector<std::string>{witness});
        const auto entries = testing::entriesWithAction(**restoring, "audit.witness_detach");
        QCOMPARE(entries.size(), std::size_t{1});
        QCOMPARE(testing::detailOf(entries.front(), "witness"), witness);
        QCOMPARE(testing::detailOf(entries.front(), "reason"), std::string("restore"));
        QVERIFY((*restoring)->signPendingEntries().ok());
        restoring->reset();
        auto reopened = open(at("restored"));
        QVERIFY2(reopened.ok(), reopened.ok() ? "" : reopened.error().message().c_str());
        QVERIFY((*reopened)->witnessesOutside().empty());
    }

    // A witness must be where a rollback of the directory cannot reach, and named plainly.
    void aWitnessInsideTheDirectoryOrMalformedIsRefused_data()
    {
        QTest::addColumn<QString>("witness");
        QTest::addColumn<QString>("expected");
        QTest::newRow("inside") << "file:{dir}/kept.witness"
                                << "inside the data directory";
        QTest::newRow("inside, dotted") << "file:{dir}/sub/../kept.witness"
                                        << "inside the data directory";
        QTest::newRow("relative") << "file:kept.witness"
                                  << "absolute path";
        QTest::newRow("no kind") << "/tmp/kept.witness"
                                 << "neither";
        QTest::newRow("tpm index outside the owner range") << "tpm:0x81000001"
                                                           << "owner NV index";
        QTest::newRow("tpm index not hex") << "tpm:0x0150001g"
                                           << "owner NV index";
    }

    void aWitnessInsideTheDirectoryOrMalformedIsRefused()
    {
        QFETCH(QString, witness);
        QFETCH(QString, expected);
        const auto path = create("inside-" + std::to_string(++created_));
        const std::string location =
            witness.replace("{dir}", QString::fromStdString(path.string())).toStdString();
        auto refused = open(path, {location});
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(refused.error().message().find(expected.toStdString()) != std::string::npos,
                 refused.error().message().c_str());
        QVERIFY(isOneSentence(refused.error().message()));
    }
};

QTEST_GUILESS_MAIN(TestCoreWitnesses)
#include "test_core_witnesses.moc"
