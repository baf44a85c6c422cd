// The offline check of a lineage document (issue #30; docs/formats/registry.md, "Verifying a
// lineage document"), against documents this test writes itself from the format's text with keys
// of its own: a registry that signed what it should not (a chain whose parents do not link, a
// promotion approved by whoever asked for it, a job approved by its submitter) and a worker that
// signed two checkpoints of one step are caught, not only edits by someone without a key.
#include "lineage_verify.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/formats/checkpoint.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <functional>

using namespace sealtrain;
using nlohmann::json;

namespace {

constexpr const char* kPayloadType = "application/vnd.in-toto+json";

std::span<const std::uint8_t> bytesOf(const std::string& text)
{
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

std::string sha256Hex(const std::string& text)
{
    return toHex(crypto::sha256(bytesOf(text)));
}

std::string hexOf(char c)
{
    return std::string(64, c);
}

// What the test's registry and worker sign, before it is written out.
struct Story {
    crypto::SigningKey registry = crypto::SigningKey::generate().value();
    crypto::SigningKey worker = crypto::SigningKey::generate().value();
    std::string spec = "{\"name\":\"m\",\"spec_version\":1}";
    std::string submitter = "dana";
    std::string approver = "ann";
    std::string promotedBy = "ann";
    bool linkParents = true;
    // A second, different checkpoint of step 4 that the worker also signed: put in the document
    // in place of the registered one.
    bool swapLastEnvelope = false;

    [[nodiscard]] std::string checkpointEnvelope(std::uint64_t step, char plaintext,
                                                 std::optional<char> parent,
                                                 const std::string& run = "job-7") const
    {
        trainer::CheckpointLineage lineage;
        lineage.subject = {"checkpoint-0000000" + std::to_string(step) + ".safetensors",
                           hexOf(plaintext)};
        lineage.job = "7";
        lineage.run = run;
        lineage.step = step;
        lineage.configSha256 = hexOf('c');
        lineage.dataset = "sha256:" + hexOf('d');
        if (parent)
            lineage.parent = trainer::CheckpointReference{"parent", hexOf(*parent)};
        const std::string statement = trainer::lineageStatement(lineage);
        return crypto::signDsse(kPayloadType, bytesOf(statement), worker).toJson();
    }

    [[nodiscard]] std::string signedByRegistry(const json& statement) const
    {
        return crypto::signDsse(kPayloadType, bytesOf(statement.dump()), registry).toJson();
    }

    [[nodiscard]] static json statement(const char* predicateType, const json& predicate)
    {
        return {{"_type", "https://in-toto.io/Statement/v1"},
                {"subject", json::array({{{"name", "m@1"}, {"digest", {{"sha256", hexOf('b')}}}}})},
                {"predicateType", predicateType},
                {"predicate", predicate}};
    }

    [[nodiscard]] std::string document() const
    {
        const std::string first = checkpointEnvelope(2, 'a', std::nullopt);
        const std::string second =
            checkpointEnvelope(4, 'b', linkParents ? std::optional<char>('a') : 'e');
        json named = json::array();
        json chain = json::array();
        for (const auto& [step, envelope, plaintext] :
             {std::tuple{2, first, 'a'}, std::tuple{4, second, 'b'}}) {
            named.push_back({{"step", step},
                             {"worker", "n1"},
                             {"signer_key_id", worker.publicKey().keyId()},
                             {"envelope_sha256", sha256Hex(envelope)},
                             {"plaintext_sha256", hexOf(plaintext)}});
            chain.push_back({{"step", step},
                             {"worker", "n1"},
                             {"signer_public_key_pem", worker.publicKey().toPem()},
                             {"envelope", envelope}});
        }
        if (swapLastEnvelope)
            chain[1]["envelope"] = checkpointEnvelope(4, 'b', std::optional<char>('a'), "job-7b");
        const json registration = statement("https://sealtrain.dev/registry/model-version/v1",
                                            {{"model", "m"},
                                             {"version", 1},
                                             {"registered_by", "dana"},
                                             {"dataset", "sha256:" + hexOf('d')},
                                             {"job",
                                              {{"id", 7},
                                               {"spec_sha256", sha256Hex(spec)},
                                               {"submitter", submitter},
                                               {"approver", approver}}},
                                             {"checkpoints", named}});
        const json promotion =
            statement("https://sealtrain.dev/registry/promotion/v1", {{"alias", "production"},
                                                                      {"promotion", 1},
                                                                      {"requested_by", "dana"},
                                                                      {"approved_by", promotedBy}});
        return json{{"format", "https://sealtrain.dev/lineage/v1"},
                    {"model", "m"},
                    {"version", 1},
                    {"digest", "sha256:" + hexOf('b')},
                    {"dataset", "sha256:" + hexOf('d')},
                    {"job", {{"id", 7}, {"spec", spec}}},
                    {"checkpoints", chain},
                    {"registration", signedByRegistry(registration)},
                    {"promotions", json::array({signedByRegistry(promotion)})}}
            .dump();
    }
};

}  // namespace

class TestCtlLineage : public QObject {
    Q_OBJECT

private slots:
    void documentOfTheFormatVerifies()
    {
        const Story story;
        auto verdict = ctl::verifyLineage(story.document(), story.registry.publicKey());
        QVERIFY2(verdict, verdict ? "" : verdict.error().message().c_str());
        QCOMPARE(verdict->model, std::string("m@1"));
        QCOMPARE(verdict->checked.size(), std::size_t{5});
        QVERIFY(verdict->checked[2].find(story.worker.publicKey().keyId()) != std::string::npos);
    }

    void whatASignerShouldNotHaveSignedIsCaught_data()
    {
        QTest::addColumn<QString>("what");
        QTest::newRow("parents") << "parents";
        QTest::newRow("self-promoted") << "self-promoted";
        QTest::newRow("self-approved job") << "self-approved job";
        QTest::newRow("unapproved job") << "unapproved job";
        QTest::newRow("other envelope of the step") << "other envelope";
    }

    void whatASignerShouldNotHaveSignedIsCaught()
    {
        QFETCH(QString, what);
        Story story;
        if (what == "parents")
            story.linkParents = false;
        else if (what == "self-promoted")
            story.promotedBy = "dana";
        else if (what == "self-approved job")
            story.approver = "dana";
        else if (what == "unapproved job")
            story.approver = "";
        else
            story.swapLastEnvelope = true;
        auto verdict = ctl::verifyLineage(story.document(), story.registry.publicKey());
        QVERIFY2(!verdict, qPrintable(what));
        QCOMPARE(verdict.error().code(), ErrorCode::Integrity);
    }

    void anotherRegistryKeyFails()
    {
        const Story story;
        auto verdict = ctl::verifyLineage(story.document(),
                                          crypto::SigningKey::generate().value().publicKey());
        QVERIFY(!verdict);
        QCOMPARE(verdict.error().code(), ErrorCode::Unauthenticated);
    }

    void malformedDocumentsFailWithASentence()
    {
        const Story story;
        for (const std::string& text :
             {std::string(), std::string("[]"),
              std::string("{\"format\":\"https://sealtrain.dev/lineage/v1\"}"),
              story.document().substr(0, 200)}) {
            auto verdict = ctl::verifyLineage(text, story.registry.publicKey());
            QVERIFY(!verdict);
            QVERIFY2(verdict.error().message().ends_with("do not rely on it."),
                     verdict.error().message().c_str());
        }
    }
};

QTEST_APPLESS_MAIN(TestCtlLineage)
#include "test_ctl_lineage.moc"
