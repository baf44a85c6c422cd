// The control plane's dataset calls (issue #6) against their attacks, each refused and audited:
// importing without dataset.import (no file is touched), reading without a grant, granting
// without dataset.grant, a manifest signed by another key. Also versions and lineage by name,
// the signature beside the manifest, per-dataset grants and revocation, and who sees what.
#include "core_fixture.h"

#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/reader.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <map>

using namespace sealtrain;
using sealtrain::testing::secret;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPassword = "a long enough passphrase";

crypto::Kek makeKek()
{
    return crypto::Kek{"datasets", 1, crypto::SecretBytes::random(32).value()};
}

void writeFile(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

struct World {
    testing::ControlPlaneFixture t;
    std::string admin;
    std::map<std::string, std::string> uris;
    fs::path root = fs::path(t.dir.path().toStdString()) / "datasets";
    fs::path sources = fs::path(t.dir.path().toStdString()) / "sources";
    crypto::Kek kek = makeKek();
    dataset::ByteTokenizer tokenizer;

    World()
    {
        auto enrollment = t.plane->identity().init("alice", secret(kPassword));
        uris["alice"] = enrollment->otpauthUri;
        admin = t.signIn("alice", kPassword, uris["alice"]);
        const std::map<std::string, std::string> users{{"steward-user", "steward"},
                                                       {"other-steward", "steward"},
                                                       {"engineer-user", "engineer"},
                                                       {"other-engineer", "engineer"},
                                                       {"auditor-user", "auditor"}};
        for (const auto& [user, role] : users) {
            uris[user] =
                testing::enrolUser(t.plane->identity(), admin, user, secret(kPassword))->otpauthUri;
            if (!t.plane->access().grantRole(admin, user, role, "").ok())
                qFatal("cannot grant %s", role.c_str());
        }
        writeFile(sources / "notes.txt", "first note\n\nsecond note\n\nthird note\n");
    }

    std::string session(const std::string& user) { return t.signIn(user, kPassword, uris[user]); }

    Result<core::DatasetImported> import(const std::string& session, const std::string& name)
    {
        core::DatasetImportRequest request;
        request.name = name;
        request.datasetsRoot = root;
        request.options.inputs = {sources / "notes.txt"};
        request.options.format = dataset::InputFormat::TextRecords;
        request.options.classification = "internal";
        return t.plane->datasets().importDataset(session, request, tokenizer, kek, t.signingKey);
    }

    [[nodiscard]] audit::Entry last() const { return t.lastEntry(); }

    [[nodiscard]] static std::string detail(const audit::Entry& entry, const std::string& key)
    {
        return testing::detailOf(entry, key);
    }
};

template <typename T>
void verifyRefused(World& w, const Result<T>& result, const std::string& action,
                   audit::Outcome outcome = audit::Outcome::Denied)
{
    QVERIFY(!result.ok());
    QVERIFY2(isOneSentence(result.error().message()), result.error().message().c_str());
    const auto entry = w.last();
    QCOMPARE(QString::fromStdString(entry.action), QString::fromStdString(action));
    QCOMPARE(entry.outcome, outcome);
    QCOMPARE(entry.reason, result.error().message());
}

}  // namespace

class TestControlPlaneDatasets : public QObject {
    Q_OBJECT

private slots:
    void stewardImportsSignsAndRegisters()
    {
        World w;
        const auto steward = w.session("steward-user");
        auto imported = w.import(steward, "notes");
        QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().message().c_str());
        const core::DatasetInfo& info = imported->info;
        QCOMPARE(info.name, std::string("notes"));
        QCOMPARE(info.version, std::int64_t{1});
        QVERIFY(info.parent.empty());
        QCOMPARE(info.creator, std::string("steward-user"));
        QCOMPARE(info.records, std::uint64_t{3});
        QCOMPARE(imported->folder, core::datasetFolder(w.root, info.id));
        // The manifest names its creator, and the platform key signs it.
        auto manifest = dataset::loadManifest(imported->folder, info.id);
        QVERIFY(manifest.ok());
        QCOMPARE(manifest->creator, std::string("steward-user"));
        QVERIFY(
            dataset::verifyManifestSignature(imported->folder, w.t.signingKey.publicKey()).ok());
        QCOMPARE(info.signer, w.t.signingKey.publicKey().keyId());
        // Audited in the same transaction as the row.
        const auto entry = w.last();
        QCOMPARE(entry.action, std::string("dataset.import"));
        QCOMPARE(entry.outcome, audit::Outcome::Ok);
        QCOMPARE(entry.target.id, info.id);
        QCOMPARE(w.detail(entry, "version"), std::string("1"));
        QCOMPARE(w.detail(entry, "signer"), info.signer);
        // Listed and shown, with the creator as its first reader.
        auto shown = w.t.plane->datasets().show(steward, "notes");
        QVERIFY(shown.ok());
        QCOMPARE(shown->id, info.id);
        QCOMPARE(shown->readers, std::vector<std::string>{"steward-user"});
    }

    void changedSourceMakesTheNextVersionLinkedToItsParent()
    {
        World w;
        const auto steward = w.session("steward-user");
        const auto first = w.import(steward, "notes");
        QVERIFY(first.ok());
        // The same sources again: nothing new, and nothing left behind.
        const auto again = w.import(steward, "notes");
        QVERIFY(!again.ok());
        QCOMPARE(again.error().code(), ErrorCode::AlreadyExists);
        QVERIFY(isOneSentence(again.error().message()));
        QCOMPARE(std::distance(fs::directory_iterator(w.root), fs::directory_iterator()), 1);
        writeFile(w.sources / "notes.txt", "first note\n\nsecond note, edited\n\nfourth\n");
        const auto second = w.import(steward, "notes");
        QVERIFY(second.ok());
        QCOMPARE(second->info.version, std::int64_t{2});
        QCOMPARE(second->info.parent, first->info.id);
        QCOMPARE(dataset::loadManifest(second->folder, second->info.id)->parent, first->info.id);
        QCOMPARE(w.detail(w.last(), "parent"), first->info.id);
        // NAME is the latest version, NAME@1 the first.
        QCOMPARE(w.t.plane->datasets().show(steward, "notes")->id, second->info.id);
        QCOMPARE(w.t.plane->datasets().show(steward, "notes@1")->id, first->info.id);
        const auto list = w.t.plane->datasets().list(steward);
        QVERIFY(list.ok());
        QCOMPARE(list->size(), std::size_t{2});
        QCOMPARE(list->front().version, std::int64_t{2});
    }

    void importWithoutTheStewardRoleIsRefusedBeforeAnyWork()
    {
        World w;
        const auto engineer = w.session("engineer-user");
        verifyRefused(w, w.import(engineer, "notes"), "dataset.import");
        QCOMPARE(w.last().actor.id, std::string("engineer-user"));
        QVERIFY(!fs::exists(w.root));
        // A session that is not valid is refused and audited too.
        verifyRefused(w, w.import("not-a-session", "notes"), "dataset.import");
    }

    void failedImportIsAuditedAndLeavesNothing()
    {
        World w;
        const auto steward = w.session("steward-user");
        core::DatasetImportRequest request;
        request.name = "broken";
        request.datasetsRoot = w.root;
        request.options.inputs = {w.sources / "missing.txt"};
        auto result = w.t.plane->datasets().importDataset(steward, request, w.tokenizer, w.kek,
                                                          w.t.signingKey);
        verifyRefused(w, result, "dataset.import", audit::Outcome::Failed);
        QVERIFY(fs::is_empty(w.root));
        QCOMPARE(w.t.plane->datasets().list(steward)->size(), std::size_t{0});
    }

    void readingNeedsAGrantAndTheReleaseIsAudited()
    {
        World w;
        const auto steward = w.session("steward-user");
        const auto engineer = w.session("engineer-user");
        const auto id = w.import(steward, "notes")->info.id;
        // No grant yet: the key is not released, the engineer does not even see the dataset.
        verifyRefused(w, w.t.plane->datasets().authorizeRead(engineer, "notes", "train"),
                      "dataset.read_key_release");
        QCOMPARE(w.t.plane->datasets().list(engineer)->size(), std::size_t{0});
        QCOMPARE(w.t.plane->datasets().show(engineer, id).error().code(), ErrorCode::NotFound);
        QVERIFY(w.t.plane->datasets().grantRead(steward, "notes", "engineer-user").ok());
        QCOMPARE(w.last().action, std::string("dataset.grant"));
        QCOMPARE(w.detail(w.last(), "user"), std::string("engineer-user"));
        auto released = w.t.plane->datasets().authorizeRead(engineer, id, "train");
        QVERIFY(released.ok());
        QCOMPARE(released->id, id);
        QCOMPARE(w.last().action, std::string("dataset.read_key_release"));
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
        QCOMPARE(w.detail(w.last(), "purpose"), std::string("train"));
        QCOMPARE(w.t.plane->datasets().list(engineer)->size(), std::size_t{1});
        // The grant is for this version only, and another engineer has none.
        verifyRefused(w,
                      w.t.plane->datasets().authorizeRead(w.session("other-engineer"), id, "train"),
                      "dataset.read_key_release");
        // A grant is no substitute for the dataset.read permission (the auditor has none).
        QVERIFY(w.t.plane->datasets().grantRead(steward, id, "auditor-user").ok());
        verifyRefused(w,
                      w.t.plane->datasets().authorizeRead(w.session("auditor-user"), id, "train"),
                      "dataset.read_key_release");
        // Revoked: refused again.
        QVERIFY(w.t.plane->datasets().revokeRead(steward, id, "engineer-user").ok());
        QCOMPARE(w.last().action, std::string("dataset.revoke"));
        verifyRefused(w, w.t.plane->datasets().authorizeRead(engineer, id, "train"),
                      "dataset.read_key_release");
        QCOMPARE(w.t.plane->datasets().revokeRead(steward, id, "engineer-user").error().code(),
                 ErrorCode::NotFound);
    }

    void grantWithoutDatasetGrantIsRefused()
    {
        World w;
        const auto steward = w.session("steward-user");
        const auto id = w.import(steward, "notes")->info.id;
        QVERIFY(w.t.plane->datasets().grantRead(steward, id, "engineer-user").ok());
        const auto engineer = w.session("engineer-user");
        // An engineer who may read it may not pass it on, nor grant themselves more.
        verifyRefused(w, w.t.plane->datasets().grantRead(engineer, id, "other-engineer"),
                      "dataset.grant");
        verifyRefused(w, w.t.plane->datasets().revokeRead(engineer, id, "steward-user"),
                      "dataset.revoke");
        // Nor may the admin, who manages identities but holds no data permission.
        verifyRefused(w, w.t.plane->datasets().grantRead(w.admin, id, "other-engineer"),
                      "dataset.grant");
        QCOMPARE(
            w.t.plane->datasets().grantRead(steward, "nothing", "engineer-user").error().code(),
            ErrorCode::NotFound);
        QCOMPARE(w.t.plane->datasets().grantRead(steward, id, "nobody").error().code(),
                 ErrorCode::NotFound);
    }

    // Issue #27: a steward answers for the datasets they imported and only for those, and never
    // grants themselves a read: one admin with a puppet steward could otherwise open any dataset.
    void stewardsGrantOnlyWhatTheyImportedAndNeverToThemselves()
    {
        World w;
        const auto steward = w.session("steward-user");
        const auto id = w.import(steward, "notes")->info.id;
        const auto other = w.session("other-steward");
        verifyRefused(w, w.t.plane->datasets().grantRead(other, id, "engineer-user"),
                      "dataset.grant");
        QVERIFY2(w.last().reason.find("steward-user, who imported") != std::string::npos,
                 w.last().reason.c_str());
        verifyRefused(w, w.t.plane->datasets().grantRead(other, id, "other-steward"),
                      "dataset.grant");
        QVERIFY(w.t.plane->datasets().grantRead(steward, id, "engineer-user").ok());
        verifyRefused(w, w.t.plane->datasets().revokeRead(other, id, "engineer-user"),
                      "dataset.revoke");
        // The importer revokes their own read, and may not grant it back to themselves.
        QVERIFY(w.t.plane->datasets().revokeRead(steward, id, "steward-user").ok());
        verifyRefused(w, w.t.plane->datasets().grantRead(steward, id, "steward-user"),
                      "dataset.grant");
        QVERIFY2(w.last().reason.find("themselves") != std::string::npos, w.last().reason.c_str());
    }

    void manifestSignedByAnotherKeyIsRefused()
    {
        World w;
        const auto steward = w.session("steward-user");
        const auto imported = w.import(steward, "notes");
        QVERIFY(imported.ok());
        const auto& platform = w.t.signingKey.publicKey();
        const crypto::KekResolver resolver =
            [&](const std::string&, std::uint32_t) -> Result<const crypto::Kek*> { return &w.kek; };
        QVERIFY(
            dataset::verifyDataset(imported->folder, imported->info.id, &resolver, &platform).ok());
        // Someone with write access to the folder re-signs it with their own key.
        const auto forger = crypto::SigningKey::generate().value();
        QVERIFY(dataset::signManifest(imported->folder, forger).ok());
        const auto verified =
            dataset::verifyDataset(imported->folder, imported->info.id, &resolver, &platform);
        QVERIFY(!verified.ok());
        QCOMPARE(verified.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(isOneSentence(verified.error().message()));
        dataset::ReaderOptions options;
        options.context = 4;
        options.signer = &platform;
        const auto reader =
            dataset::DatasetReader::open(imported->folder, imported->info.id, resolver, options);
        QVERIFY(!reader.ok());
        QCOMPARE(reader.error().code(), ErrorCode::Unauthenticated);
    }
};

QTEST_APPLESS_MAIN(TestControlPlaneDatasets)
#include "test_core_datasets.moc"
