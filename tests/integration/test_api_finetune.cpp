// Fine-tuning from an imported GPT-2 through the real daemon (issue #30; docs/registry.md,
// "Base models and fine-tuning"): transformers makes a small GPT-2 and its BPE tokenizer
// (tests/scripts/finetune_interop.py); bob imports the folder as a base model (sealed, its
// registration signed, audited); a folder our model would not compute and a caller without
// model.register are refused and keep nothing; a job spec that starts from the model is vetted
// for its shape and its dataset's tokenizer; the control plane's own trainer runs it from the
// imported weights, and its first step's loss over the whole training split equals the loss
// transformers computes within 1e-5 relative; a worker's fine-tuning job is handed the model's
// one data key and the sealed file, and a checkpoint that does not name the authorised base is
// refused; the fine-tuned version's lineage names its base and verifies offline.
#include "daemon_fixture.h"
#include "test_checkpoint.h"
#include "test_worker.h"

#include "lineage_verify.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/base_model.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <QtTest/QtTest>

#include <cmath>
#include <fstream>

using namespace sealtrain;

class TestApiFinetune : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;
    std::filesystem::path made_;  // what finetune_interop.py wrote
    nlohmann::json expected_;
    std::string digest_;  // of the imported version
    std::optional<crypto::PublicKey> registryKey_;
    bool skipped_ = false;
    std::int64_t tuned_ = 0;               // the job that starts from the import
    std::vector<float> importParameters_;  // the import's, as a trainer loads them
    std::string exportedDigest_;  // of tales-export@1, a version trained here from the import

    [[nodiscard]] static std::string read(const std::filesystem::path& path)
    {
        return readWholeFile(path).value();
    }

    // A copy of the made folder with `edit` applied to its config.json.
    [[nodiscard]] std::filesystem::path editedFolder(const std::string& name,
                                                     const nlohmann::json& edit) const
    {
        auto folder = made_ / name;
        std::filesystem::create_directories(folder);
        for (const char* file : {"model.safetensors", "vocab.json", "merges.txt"})
            std::filesystem::copy_file(made_ / "model" / file, folder / file,
                                       std::filesystem::copy_options::overwrite_existing);
        auto config = nlohmann::json::parse(read(made_ / "model" / "config.json"));
        config.update(edit);
        std::ofstream(folder / "config.json") << config.dump(2);
        return folder;
    }

    [[nodiscard]] std::string spec(const std::string& name, const std::string& dataset,
                                   std::int64_t width, const std::string& init = "tiny@1") const
    {
        return fmt::format(
            "spec_version: 1\nname: {}\nproject: demo\ndataset: {}\n"
            "model: {{layers: {}, heads: {}, width: {}, context: {}, init: {}}}\n"
            "optimizer: {{lr: 0.0001, min_lr: 0.0001}}\n"
            "schedule: {{steps: 2, batch: {}}}\n"
            "resources: {{pool: cpu, device: cpu, threads: 1}}\n",
            name, dataset, expected_.at("layers").get<int>(), expected_.at("heads").get<int>(),
            width, expected_.at("context").get<int>(), init, expected_.at("sequences").get<int>());
    }

    [[nodiscard]] std::int64_t width() const { return expected_.at("width").get<std::int64_t>(); }

    // The made records imported by sam as `name`, all in training: with the model's BPE
    // tokenizer (`bpe`), else bytes.
    Result<api::ImportedDataset> importRecords(const std::string& name, bool bpe)
    {
        api::ImportSettings settings;
        settings.name = name;
        settings.format = "jsonl";
        settings.field = "text";
        settings.validationBasisPoints = 0;
        if (bpe) {
            settings.gpt2VocabJson = read(made_ / "model" / "vocab.json");
            settings.gpt2MergesTxt = read(made_ / "model" / "merges.txt");
        }
        const auto records = made_ / "records.jsonl";
        return daemon_.as("sam")->datasets().importDataset(
            settings, {{records, "records.jsonl", std::filesystem::file_size(records)}}, {});
    }

    // The training configuration of the made GPT-2 over the whole "tales" split.
    [[nodiscard]] trainer::TrainingConfig config() const
    {
        trainer::TrainingConfig config;
        config.model.vocabSize = expected_.at("vocab_size").get<std::size_t>();
        config.model.paddedVocabSize = trainer::GptConfig::padVocab(config.model.vocabSize);
        config.model.contextLength = expected_.at("context").get<std::size_t>();
        config.model.layers = expected_.at("layers").get<std::size_t>();
        config.model.heads = expected_.at("heads").get<std::size_t>();
        config.model.width = expected_.at("width").get<std::size_t>();
        config.batch = expected_.at("sequences").get<std::size_t>();
        return config;
    }

    // Whether a line of `checked` (a lineage verdict's) holds `text`.
    [[nodiscard]] static bool mentions(const std::vector<std::string>& checked,
                                       const std::string& text)
    {
        return std::any_of(checked.begin(), checked.end(), [&](const std::string& line) {
            return line.find(text) != std::string::npos;
        });
    }

    // A checkpoint at step 2 of the assigned job holding `parameters` (the optimizer's moments
    // zero), naming `base` as the model it started from, signed by the worker.
    [[nodiscard]] Result<trainer::WrittenCheckpoint>
    tunedCheckpoint(const std::filesystem::path& folder, const testing::TestWorker& worker,
                    const api::JobAssignment& assignment, const trainer::TrainerKeys& keys,
                    const std::vector<float>& parameters,
                    const trainer::CheckpointReference& base) const
    {
        const std::vector<float> zeros(parameters.size(), 0.0F);
        trainer::CheckpointState state;
        state.config = config();
        state.step = 2;
        state.optimizerStep = 2;
        state.runId = assignment.runId;
        state.jobId = std::to_string(assignment.job);
        state.datasetId = assignment.datasetId;
        state.tokenizer = "gpt2-bpe";
        return trainer::writeCheckpoint(folder, state, {parameters, zeros, zeros}, std::nullopt,
                                        *keys.newest(assignment.checkpointKek), *worker.signing, 0,
                                        base);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        const std::filesystem::path root = tmp_.path().toStdString();
        made_ = root / "made";
        QProcess python;
        python.setProcessChannelMode(QProcess::MergedChannels);
        python.start(SEALTRAIN_INTEROP_PYTHON,
                     {SEALTRAIN_FINETUNE_INTEROP, QString::fromStdString(made_.string())});
        QVERIFY2(python.waitForFinished(300000), "finetune_interop.py did not finish");
        if (python.exitCode() == 77) {
            skipped_ = true;
            QSKIP("transformers is not installed in .venv-interop (scripts/setup makes it)");
        }
        QVERIFY2(python.exitCode() == 0, python.readAll().constData());
        expected_ = nlohmann::json::parse(read(made_ / "expected.json"));

        daemon_.create(
            root, "alice",
            {{"sam", "steward"}, {"bob", "engineer"}, {"ann", "approver"}, {"otto", "operator"}});
        daemon_.start({"--trainer", SEALTRAIN_TRAIN_EXECUTABLE});
        auto keys = daemon_.as("ann")->platform().signingKeys();
        QVERIFY2(keys, keys ? "" : keys.error().message().c_str());
        registryKey_.emplace(crypto::PublicKey::fromPem(keys->registryPem).value());

        // The dataset with the model's tokenizer, every record in training; and one of bytes.
        auto sam = daemon_.as("sam");
        auto tales = importRecords("tales", true);
        QVERIFY2(tales, tales ? "" : tales.error().message().c_str());
        auto bytes = importRecords("bytes", false);
        QVERIFY2(bytes, bytes ? "" : bytes.error().message().c_str());
        QVERIFY(sam->datasets().grantRead("tales", "bob"));
        QVERIFY(sam->datasets().grantRead("bytes", "bob"));
    }

    // Only model.register imports, and only a folder our model computes exactly; a refusal keeps
    // nothing.
    void importsThatAreRefused()
    {
        auto denied = daemon_.as("otto")->registry().importModel(
            {"tiny", "demo", "", (made_ / "model").string()});
        QVERIFY(!denied);
        QCOMPARE(denied.error().code(), ErrorCode::PermissionDenied);

        auto bob = daemon_.as("bob");
        auto relu = bob->registry().importModel(
            {"tiny", "demo", "", editedFolder("relu", {{"activation_function", "relu"}}).string()});
        QVERIFY(!relu);
        QCOMPARE(relu.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(relu.error().message().find("activation_function") != std::string::npos,
                 relu.error().message().c_str());
        // A vocabulary that is not the tokenizer's.
        auto vocab = bob->registry().importModel(
            {"tiny", "demo", "", editedFolder("vocab", {{"vocab_size", 300}}).string()});
        QVERIFY(!vocab);
        // A tokenizer other than the model's (the byte tokenizer's 256 tokens, the model 275).
        const auto otherTokens = editedFolder("tokens", nlohmann::json::object());
        std::ofstream(otherTokens / "vocab.json", std::ios::trunc)
            << dataset::byteTokenizerGpt2Vocab();
        std::ofstream(otherTokens / "merges.txt", std::ios::trunc)
            << dataset::byteTokenizerGpt2Merges();
        auto tokens = bob->registry().importModel({"tiny", "demo", "", otherTokens.string()});
        QVERIFY(!tokens);
        QCOMPARE(tokens.error().code(), ErrorCode::InvalidArgument);
        QVERIFY2(tokens.error().message().find("vocab.json") != std::string::npos,
                 tokens.error().message().c_str());
        const auto missing = made_ / "no-merges";
        std::filesystem::create_directories(missing);
        std::filesystem::copy_file(made_ / "model" / "config.json", missing / "config.json");
        auto incomplete = bob->registry().importModel({"tiny", "demo", "", missing.string()});
        QVERIFY(!incomplete);
        QCOMPARE(incomplete.error().code(), ErrorCode::NotFound);

        auto models = bob->registry().listModels();
        QVERIFY2(models, models ? "" : models.error().message().c_str());
        QVERIFY(models->empty());
        std::error_code ec;
        QVERIFY(!std::filesystem::exists(daemon_.dataDir() / "models" / "tiny" / "1", ec));
    }

    // Imported: sealed (no parameter in the clear in the data directory), its registration
    // signed, the same folder not imported twice.
    void importedAsABaseModel()
    {
        auto bob = daemon_.as("bob");
        auto version = bob->registry().importModel(
            {"tiny", "demo", "made by transformers", (made_ / "model").string()});
        QVERIFY2(version, version ? "" : version.error().message().c_str());
        QCOMPARE(version->version, std::int64_t{1});
        QCOMPARE(version->source, std::string("import"));
        QVERIFY(version->digest.starts_with("sha256:"));
        digest_ = version->digest;
        const auto shape = nlohmann::json::parse(version->shape);
        QCOMPARE(shape.at("layers").get<int>(), expected_.at("layers").get<int>());
        QCOMPARE(shape.at("vocab_size").get<int>(), expected_.at("vocab_size").get<int>());
        const auto kept = daemon_.dataDir() / "models" / "tiny" / "1";
        QVERIFY(std::filesystem::exists(kept / "model.sealed"));
        QVERIFY(!std::filesystem::exists(kept / "model.safetensors"));
        QCOMPARE(read(kept / "vocab.json"), read(made_ / "model" / "vocab.json"));

        auto again = bob->registry().importModel({"tiny", "demo", "", (made_ / "model").string()});
        QVERIFY(!again);
        QCOMPARE(again.error().code(), ErrorCode::AlreadyExists);

        auto document = bob->registry().modelLineage("tiny@1");
        QVERIFY2(document, document ? "" : document.error().message().c_str());
        auto verdict = ctl::verifyLineage(*document, *registryKey_);
        QVERIFY2(verdict, verdict ? "" : verdict.error().message().c_str());
        QCOMPARE(verdict->checked.size(), std::size_t{1});
        QVERIFY(verdict->checked[0].find("import of tiny@1") != std::string::npos);
        const std::string weights =
            toHex(crypto::sha256(asBytes(read(made_ / "model" / "model.safetensors"))));
        QVERIFY2(verdict->checked[0].find("model.safetensors " + weights) != std::string::npos,
                 verdict->checked[0].c_str());
        // Sampling and exporting a base model are refused with a sentence.
        auto exported = bob->registry().requestExport("tiny@1", "");
        QVERIFY(!exported);
        QCOMPARE(exported.error().code(), ErrorCode::Unsupported);
    }

    // The spec must keep the model's shape and read a dataset of the model's tokenizer.
    void fineTuningSpecsAreVetted()
    {
        auto bob = daemon_.as("bob");
        const auto failedCheck = [](const api::JobSummary& job) {
            for (const auto& check : job.vetting)
                if (check.check == "base model")
                    return check.ok ? std::string() : check.detail;
            return std::string("no base model check");
        };
        auto wider = bob->jobs().submitJob(spec("wider", "tales", width() * 2));
        QVERIFY2(wider, wider ? "" : wider.error().message().c_str());
        QVERIFY2(failedCheck(*wider).find("model.width") != std::string::npos,
                 failedCheck(*wider).c_str());
        auto otherTokens = bob->jobs().submitJob(spec("bytes", "bytes", width()));
        QVERIFY2(otherTokens, otherTokens ? "" : otherTokens.error().message().c_str());
        QVERIFY2(failedCheck(*otherTokens).find("tokenizer") != std::string::npos,
                 failedCheck(*otherTokens).c_str());
        // An alias, which a promotion a second person approved points at the import, is pinned
        // to the version it names at vetting.
        auto asked = bob->registry().requestPromotion("tiny", 1, "stable", "the base we tune");
        QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
        auto promoted = daemon_.as("ann")->registry().approvePromotion(asked->id, digest_);
        QVERIFY2(promoted, promoted ? "" : promoted.error().message().c_str());
        auto good = bob->jobs().submitJob(spec("tuned", "tales", width(), "tiny@stable"));
        QVERIFY2(good, good ? "" : good.error().message().c_str());
        QVERIFY2(failedCheck(*good).empty(), failedCheck(*good).c_str());
        QVERIFY2(good->specJson.find("\"init\":\"tiny@1\"") != std::string::npos,
                 good->specJson.c_str());
        tuned_ = good->id;
    }

    // The control plane's own trainer starts from the imported weights: the first step's loss
    // over the whole training split (one batch) is transformers' within 1e-5 relative.
    void firstStepLossIsTransformers()
    {
        auto bob = daemon_.as("bob");
        auto job = bob->jobs().showJob(tuned_);
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        auto approved = daemon_.as("ann")->jobs().approveJob(job->id, job->specSha256);
        QVERIFY2(approved, approved ? "" : approved.error().message().c_str());
        std::vector<std::string> lines;
        auto ran = bob->training().runJob(job->id,
                                          [&](const std::string& line) { lines.push_back(line); });
        QVERIFY2(ran, ran ? "" : ran.error().message().c_str());
        QCOMPARE(ran->exitCode, 0);
        std::optional<double> first;
        for (const std::string& line : lines) {
            const auto record = nlohmann::json::parse(line, nullptr, false);
            if (record.is_object() && record.value("kind", "") == "step"
                && record.value("step", 0) == 1)
                first = record.at("loss").get<double>();
        }
        QVERIFY2(first.has_value(), "the run reported no first step");
        const double theirs = expected_.at("loss").get<double>();
        qInfo("first step's loss over the split: transformers %.9g, ours %.9g", theirs, *first);
        QVERIFY2(std::abs(*first - theirs) <= 1e-5 * std::abs(theirs),
                 qPrintable(QString("transformers %1, ours %2")
                                .arg(theirs, 0, 'g', 17)
                                .arg(*first, 0, 'g', 17)));
    }

    // A worker's fine-tuning job gets the model's one data key and its sealed file, which open
    // to the imported weights; its checkpoints must name that base, and the registered version's
    // lineage names it and verifies offline.
    void workerJobStartsFromTheBaseAndItsLineageNamesIt()
    {
        testing::TestWorker worker = testing::enrollTestWorker(daemon_, "otto", "n1", "cpu");
        auto bob = daemon_.as("bob");
        auto job = bob->jobs().submitJob(spec("dispatched", "tales", width()));
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        QVERIFY(daemon_.as("ann")->jobs().approveJob(job->id, job->specSha256));
        auto taken = worker.client->worker().takeJob();
        QVERIFY2(taken, taken ? "" : taken.error().message().c_str());
        QVERIFY(taken->has_value());
        const api::JobAssignment assignment = **taken;
        QVERIFY(assignment.startsFromModel);
        const trainer::TrainerKeys keys = testing::openJobKeys(*worker.box, assignment);
        const auto base = daemon_.runDir() / "base";
        std::filesystem::create_directories(base);
        auto fetched =
            worker.client->worker().fetchInitModel(assignment.job, assignment.attempt, base);
        QVERIFY2(fetched, fetched ? "" : fetched.error().message().c_str());
        QCOMPARE(fetched->size(), std::size_t{1});
        // The data key opens it (no KEK was handed over), to the digest the version names.
        trainer::GptConfig config;
        config.vocabSize = expected_.at("vocab_size").get<std::size_t>();
        config.paddedVocabSize = trainer::GptConfig::padVocab(config.vocabSize);
        config.contextLength = expected_.at("context").get<std::size_t>();
        config.layers = expected_.at("layers").get<std::size_t>();
        config.heads = expected_.at("heads").get<std::size_t>();
        config.width = expected_.at("width").get<std::size_t>();
        const std::string sha256 = digest_.substr(7);
        auto opened = trainer::loadInitialParameters(fetched->front(), keys.dataKeyResolver(),
                                                     keys.resolver(), sha256, config);
        QVERIFY2(opened, opened ? "" : opened.error().message().c_str());
        auto swapped =
            trainer::loadInitialParameters(fetched->front(), keys.dataKeyResolver(),
                                           keys.resolver(), std::string(64, '0'), config);
        QVERIFY(!swapped);
        QCOMPARE(swapped.error().code(), ErrorCode::Unauthenticated);

        // A checkpoint that names no base (a run from scratch passed off as this job's) is
        // refused; one that names the authorised base is recorded.
        auto scratch = testing::writeChainedTestCheckpoint(
            daemon_.runDir() / "scratch", keys, assignment, *worker.signing, 2, 2,
            std::to_string(assignment.job), assignment.runId, assignment.datasetId, std::nullopt);
        auto refused = worker.client->worker().uploadCheckpoint(
            assignment.job, assignment.attempt, scratch.files.sealed, scratch.files.envelope);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::Integrity);
        auto tuned = testing::writeChainedTestCheckpoint(
            daemon_.runDir() / "tuned", keys, assignment, *worker.signing, 2, 2,
            std::to_string(assignment.job), assignment.runId, assignment.datasetId, std::nullopt,
            trainer::CheckpointReference{"tiny@1", sha256});
        auto uploaded = worker.client->worker().uploadCheckpoint(
            assignment.job, assignment.attempt, tuned.files.sealed, tuned.files.envelope);
        QVERIFY2(uploaded, uploaded ? "" : uploaded.error().message().c_str());
        QVERIFY(
            worker.client->worker().finishJob(assignment.job, assignment.attempt, true, 0.0, ""));

        auto version = bob->registry().registerModel("tales-tuned", "", assignment.job, 0);
        QVERIFY2(version, version ? "" : version.error().message().c_str());
        QCOMPARE(version->base, std::string("tiny@1"));
        auto document = bob->registry().modelLineage("tales-tuned@1");
        QVERIFY2(document, document ? "" : document.error().message().c_str());
        auto verdict = ctl::verifyLineage(*document, *registryKey_);
        QVERIFY2(verdict, verdict ? "" : verdict.error().message().c_str());
        QVERIFY(mentions(verdict->checked, "base model tiny@1"));
        QVERIFY(mentions(verdict->checked, "names base model tiny@1"));
        // The base's registration swapped for another signed statement fails the document.
        auto edited = nlohmann::json::parse(*document);
        edited["base"]["digest"] = "sha256:" + std::string(64, '1');
        QVERIFY(!ctl::verifyLineage(edited.dump(), *registryKey_));
        // Another statement the registry signed (the version's own registration) in place of
        // the base's: signed, but not about the base.
        auto another = nlohmann::json::parse(*document);
        another["base"]["registration"] = another["registration"];
        QVERIFY(!ctl::verifyLineage(another.dump(), *registryKey_));
        auto dropped = nlohmann::json::parse(*document);
        dropped.erase("base");
        QVERIFY(!ctl::verifyLineage(dropped.dump(), *registryKey_));
    }

    // A version fine-tuned from the import is exported with the base's BPE tokenizer files:
    // transformers reads the folder, encodes as the original tokenizer, and computes the original
    // model (the checkpoint holds the imported weights unchanged).
    void fineTunedExportCarriesTheBaseTokenizer()
    {
        testing::TestWorker worker = testing::enrollTestWorker(daemon_, "otto", "n2", "cpu");
        auto bob = daemon_.as("bob");
        auto job = bob->jobs().submitJob(spec("exported", "tales", width()));
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        QVERIFY(daemon_.as("ann")->jobs().approveJob(job->id, job->specSha256));
        auto taken = worker.client->worker().takeJob();
        QVERIFY2(taken && taken->has_value(), taken ? "no job" : taken.error().message().c_str());
        const api::JobAssignment assignment = **taken;
        const trainer::TrainerKeys keys = testing::openJobKeys(*worker.box, assignment);
        const auto base = daemon_.runDir() / "base-export";
        std::filesystem::create_directories(base);
        auto fetched =
            worker.client->worker().fetchInitModel(assignment.job, assignment.attempt, base);
        QVERIFY2(fetched, fetched ? "" : fetched.error().message().c_str());
        const std::string sha256 = digest_.substr(7);
        auto parameters = trainer::loadInitialParameters(fetched->front(), keys.dataKeyResolver(),
                                                         keys.resolver(), sha256, config().model);
        QVERIFY2(parameters, parameters ? "" : parameters.error().message().c_str());
        importParameters_ = *parameters;
        auto written = tunedCheckpoint(daemon_.runDir() / "exported", worker, assignment, keys,
                                       *parameters, {"tiny@1", sha256});
        QVERIFY2(written, written ? "" : written.error().message().c_str());
        auto uploaded = worker.client->worker().uploadCheckpoint(
            assignment.job, assignment.attempt, written->files.sealed, written->files.envelope);
        QVERIFY2(uploaded, uploaded ? "" : uploaded.error().message().c_str());
        QVERIFY(
            worker.client->worker().finishJob(assignment.job, assignment.attempt, true, 0.0, ""));

        auto version = bob->registry().registerModel("tales-export", "", assignment.job, 0);
        QVERIFY2(version, version ? "" : version.error().message().c_str());
        exportedDigest_ = version->digest;
        auto asked = bob->registry().requestExport("tales-export@1", "for the review board");
        QVERIFY2(asked, asked ? "" : asked.error().message().c_str());
        QVERIFY(daemon_.as("ann")->registry().approveExport(asked->id, version->digest));
        const auto folder = daemon_.runDir() / "tales-export-1";
        auto exported = bob->registry().downloadExport(asked->id, folder);
        QVERIFY2(exported, exported ? "" : exported.error().message().c_str());
        QCOMPARE(read(folder / "vocab.json"), read(made_ / "model" / "vocab.json"));
        QCOMPARE(read(folder / "merges.txt"), read(made_ / "model" / "merges.txt"));
        QProcess python;
        python.setProcessChannelMode(QProcess::MergedChannels);
        python.start(SEALTRAIN_INTEROP_PYTHON, {SEALTRAIN_FINETUNE_INTEROP, "--check-export",
                                                QString::fromStdString(folder.string()),
                                                QString::fromStdString(made_.string())});
        QVERIFY(python.waitForFinished(300000));
        const QByteArray out = python.readAll();
        qInfo("%s", out.trimmed().constData());
        QVERIFY2(python.exitCode() == 0, out.constData());
    }

    // Issue #48 item 3: the data behind a starting model is the job's data too. bob fine-tunes
    // tales-export@1 (trained on tales) on tales2, a dataset of the same tokenizer: without a
    // read grant on tales his job fails vetting ("base model data"); with it the job is
    // approved, and a read taken away before the dispatch keeps it from any worker.
    void fineTuningCarriesItsBaseData()
    {
        QVERIFY2(!exportedDigest_.empty(), "no version was trained from the import");
        auto sam = daemon_.as("sam");
        auto tales2 = importRecords("tales2", true);
        QVERIFY2(tales2, tales2 ? "" : tales2.error().message().c_str());
        QVERIFY(sam->datasets().grantRead("tales2", "bob"));
        QVERIFY(sam->datasets().revokeRead("tales", "bob"));
        auto bob = daemon_.as("bob");
        const auto baseData = [](const api::JobSummary& job) {
            return std::find_if(job.vetting.begin(), job.vetting.end(),
                                [](const auto& c) { return c.check == "base model data"; });
        };
        auto unread =
            bob->jobs().submitJob(spec("no-base-read", "tales2", width(), "tales-export@1"));
        QVERIFY2(unread, unread ? "" : unread.error().message().c_str());
        auto check = baseData(*unread);
        QVERIFY(check != unread->vetting.end());
        QVERIFY2(!check->ok && check->detail.find("read grant") != std::string::npos,
                 check->detail.c_str());
        QVERIFY(!daemon_.as("ann")->jobs().approveJob(unread->id, unread->specSha256));

        QVERIFY(sam->datasets().grantRead("tales", "bob"));
        auto job = bob->jobs().submitJob(spec("base-read", "tales2", width(), "tales-export@1"));
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        check = baseData(*job);
        QVERIFY(check != job->vetting.end());
        QVERIFY2(check->ok, check->detail.c_str());
        QVERIFY(daemon_.as("ann")->jobs().approveJob(job->id, job->specSha256));
        QVERIFY(sam->datasets().revokeRead("tales", "bob"));
        testing::TestWorker worker = testing::enrollTestWorker(daemon_, "otto", "n4", "cpu");
        auto taken = worker.client->worker().takeJob();
        QVERIFY2(taken, taken ? "" : taken.error().message().c_str());
        QVERIFY(!taken->has_value());
        QVERIFY(sam->datasets().grantRead("tales", "bob"));
        QVERIFY(bob->jobs().cancelJob(job->id, "checked that the base's data stops the dispatch"));
    }

    // A version trained here is a starting model too (fine-tuning our own models): a job from
    // tales-export@1 is vetted against that version's job, handed its checkpoint and the one data
    // key that opens it, and reads the parameters it holds; the import it came from is not what
    // was authorised, a checkpoint naming that import is refused, and the new version's lineage
    // names tales-export@1 as its base and verifies offline.
    void ownVersionIsFineTunedFurther()
    {
        QVERIFY2(!exportedDigest_.empty(), "no version was trained from the import");
        testing::TestWorker worker = testing::enrollTestWorker(daemon_, "otto", "n3", "cpu");
        auto bob = daemon_.as("bob");
        auto job = bob->jobs().submitJob(spec("further", "tales", width(), "tales-export@1"));
        QVERIFY2(job, job ? "" : job.error().message().c_str());
        const auto check = std::find_if(job->vetting.begin(), job->vetting.end(),
                                        [](const auto& c) { return c.check == "base model"; });
        QVERIFY(check != job->vetting.end());
        QVERIFY2(check->ok && check->detail.find(exportedDigest_) != std::string::npos,
                 check->detail.c_str());
        QVERIFY(daemon_.as("ann")->jobs().approveJob(job->id, job->specSha256));
        auto taken = worker.client->worker().takeJob();
        QVERIFY2(taken && taken->has_value(), taken ? "no job" : taken.error().message().c_str());
        const api::JobAssignment assignment = **taken;
        QCOMPARE(assignment.job, job->id);
        QVERIFY(assignment.startsFromModel);
        const trainer::TrainerKeys keys = testing::openJobKeys(*worker.box, assignment);
        const auto start = daemon_.runDir() / "start-further";
        std::filesystem::create_directories(start);
        auto fetched =
            worker.client->worker().fetchInitModel(assignment.job, assignment.attempt, start);
        QVERIFY2(fetched, fetched ? "" : fetched.error().message().c_str());
        QCOMPARE(fetched->size(), std::size_t{1});
        const std::string sha256 = exportedDigest_.substr(7);
        auto parameters = trainer::loadInitialParameters(fetched->front(), keys.dataKeyResolver(),
                                                         keys.resolver(), sha256, config().model);
        QVERIFY2(parameters, parameters ? "" : parameters.error().message().c_str());
        QVERIFY(*parameters == importParameters_);  // what tales-export@1's checkpoint holds
        auto import =
            trainer::loadInitialParameters(fetched->front(), keys.dataKeyResolver(),
                                           keys.resolver(), digest_.substr(7), config().model);
        QVERIFY(!import);
        QCOMPARE(import.error().code(), ErrorCode::Unauthenticated);

        auto grandparent = tunedCheckpoint(daemon_.runDir() / "further-import", worker, assignment,
                                           keys, *parameters, {"tiny@1", digest_.substr(7)});
        QVERIFY2(grandparent, grandparent ? "" : grandparent.error().message().c_str());
        auto refused = worker.client->worker().uploadCheckpoint(assignment.job, assignment.attempt,
                                                                grandparent->files.sealed,
                                                                grandparent->files.envelope);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::Integrity);
        auto written = tunedCheckpoint(daemon_.runDir() / "further", worker, assignment, keys,
                                       *parameters, {"tales-export@1", sha256});
        QVERIFY2(written, written ? "" : written.error().message().c_str());
        auto uploaded = worker.client->worker().uploadCheckpoint(
            assignment.job, assignment.attempt, written->files.sealed, written->files.envelope);
        QVERIFY2(uploaded, uploaded ? "" : uploaded.error().message().c_str());
        QVERIFY(
            worker.client->worker().finishJob(assignment.job, assignment.attempt, true, 0.0, ""));

        auto version = bob->registry().registerModel("tales-further", "", assignment.job, 0);
        QVERIFY2(version, version ? "" : version.error().message().c_str());
        QCOMPARE(version->base, std::string("tales-export@1"));
        auto document = bob->registry().modelLineage("tales-further@1");
        QVERIFY2(document, document ? "" : document.error().message().c_str());
        auto verdict = ctl::verifyLineage(*document, *registryKey_);
        QVERIFY2(verdict, verdict ? "" : verdict.error().message().c_str());
        QVERIFY(mentions(verdict->checked, "base model tales-export@1"));
        QVERIFY(mentions(verdict->checked, "names base model tales-export@1"));
        QCOMPARE(nlohmann::json::parse(*document).at("base").at("source").get<std::string>(),
                 std::string("job"));
    }

    // Every import and refusal is in the audit log with the real actor and the files' digests.
    void importsAreAudited()
    {
        QVERIFY(daemon_.stop());
        auto entries = daemon_.auditEntries();
        QVERIFY2(entries, entries ? "" : entries.error().message().c_str());
        const auto count = [&](audit::Outcome outcome, const std::string& actor) {
            return std::count_if(entries->begin(), entries->end(), [&](const audit::Entry& e) {
                return e.action == "model.import" && e.outcome == outcome && e.actor.id == actor;
            });
        };
        QCOMPARE(count(audit::Outcome::Denied, "otto"), 1L);
        QCOMPARE(count(audit::Outcome::Ok, "bob"), 1L);
        QVERIFY(count(audit::Outcome::Failed, "bob") >= 4L);  // relu, vocabulary, tokens, again
        const std::string weights =
            "sha256:" + toHex(crypto::sha256(asBytes(read(made_ / "model" / "model.safetensors"))));
        QVERIFY(std::any_of(entries->begin(), entries->end(), [&](const audit::Entry& e) {
            return e.action == "model.import" && e.outcome == audit::Outcome::Ok
                   && e.target.id == "tiny@1"
                   && std::any_of(e.details.begin(), e.details.end(), [&](const audit::Detail& d) {
                          return d.name == "model.safetensors"
                                 && std::string(d.value.begin(), d.value.end()) == weights;
                      });
        }));
    }

    void cleanupTestCase()
    {
        if (!skipped_)
            daemon_.kill();
    }
};

QTEST_GUILESS_MAIN(TestApiFinetune)
#include "test_api_finetune.moc"
