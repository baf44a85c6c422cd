// The registry's signed statements and the lineage document (docs/formats/registry.md): in-toto
// Statement v1 JSON, canonical (sorted keys, no white space), in DSSE envelopes signed with the
// registry key; the lineage document gathers them with the checkpoint chain's envelopes.
#include "sealtrain/core/registry/registry.h"

#include "jobs/rows.h"
#include "registry/rows.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/hash.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>

namespace sealtrain::core {
namespace internal {
namespace {

using nlohmann::json;

std::span<const std::uint8_t> bytesOf(std::string_view text)
{
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

json statement(std::string_view predicateType, const std::string& model, std::int64_t version,
               const std::string& digest, json predicate)
{
    return {
        {"_type", "https://in-toto.io/Statement/v1"},
        {"subject", json::array({{{"name", model + "@" + std::to_string(version)},
                                  {"digest", {{"sha256", digest.substr(digest.find(':') + 1)}}}}})},
        {"predicateType", predicateType},
        {"predicate", std::move(predicate)}};
}

std::string signedStatement(const json& statement, const crypto::SigningKey& key)
{
    const std::string payload = statement.dump();
    return crypto::signDsse(kInTotoPayloadType, bytesOf(payload), key).toJson();
}

}  // namespace

Result<std::string> registrationStatement(const ModelVersion& version, const JobInfo& job,
                                          const std::vector<CheckedCheckpoint>& chain,
                                          const crypto::SigningKey& key)
{
    json checkpoints = json::array();
    for (const CheckedCheckpoint& link : chain) {
        auto signer = crypto::PublicKey::fromPem(link.signerPem);
        if (!signer)
            return signer.error();
        checkpoints.push_back({{"step", link.recorded.step},
                               {"attempt", link.recorded.attempt},
                               {"worker", link.recorded.worker},
                               {"signer_key_id", signer->keyId()},
                               {"envelope_sha256", toHex(crypto::sha256(bytesOf(link.envelope)))},
                               {"plaintext_sha256", link.recorded.plaintextSha256},
                               {"sealed_sha256", link.recorded.sealedSha256}});
    }
    const json predicate{{"model", version.name},
                         {"version", version.version},
                         {"project", version.project},
                         {"description", version.description},
                         {"registered_by", version.registeredBy},
                         {"registered", toRfc3339(version.registered)},
                         {"dataset", version.datasetId},
                         {"job",
                          {{"id", job.id},
                           {"name", job.name},
                           {"spec_sha256", job.specSha256},
                           {"submitter", job.submitter},
                           {"approver", job.approver}}},
                         {"checkpoints", std::move(checkpoints)}};
    json full = predicate;
    if (!version.base.empty())
        full["base"] = version.base;  // only a fine-tuned version's statement names one
    return signedStatement(
        statement(kVersionPredicate, version.name, version.version, version.digest, full), key);
}

std::string importStatement(const ModelVersion& version, const StoredImport& stored,
                            const crypto::SigningKey& key)
{
    json sources = json::object();
    for (const auto& [file, sha256] : stored.sources)
        sources[file] = sha256;
    const json predicate{{"model", version.name},
                         {"version", version.version},
                         {"project", version.project},
                         {"description", version.description},
                         {"imported_by", version.registeredBy},
                         {"imported", toRfc3339(version.registered)},
                         {"sealed_sha256", stored.sealedSha256},
                         {"shape", json::parse(stored.shape)},
                         {"tokenizer", json::parse(stored.tokenizer)},
                         {"sources", std::move(sources)}};
    return signedStatement(
        statement(kImportPredicate, version.name, version.version, version.digest, predicate), key);
}

std::string promotionStatement(const Promotion& promotion, const crypto::SigningKey& key)
{
    const json predicate{{"model", promotion.model},
                         {"version", promotion.version},
                         {"alias", promotion.alias},
                         {"previous_version", promotion.previousVersion},
                         {"promotion", promotion.id},
                         {"reason", promotion.reason},
                         {"requested_by", promotion.requestedBy},
                         {"requested", toRfc3339(promotion.requested)},
                         {"approved_by", promotion.decidedBy},
                         {"approved", toRfc3339(promotion.decided)}};
    return signedStatement(statement(kPromotionPredicate, promotion.model, promotion.version,
                                     promotion.digest, predicate),
                           key);
}

}  // namespace internal

Result<std::string> Registry::lineage(const std::string& session, const std::string& reference)
{
    auto parsed = parseModelReference(reference);
    const auto project = internal::modelProject(gate_.database(), parsed ? parsed->name : "");
    return gate_.performReturning(
        session,
        {"model.lineage",
         "",
         project && project->has_value() ? **project : "",
         {"model", reference}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<std::string> {
            if (!parsed)
                return parsed.error();
            auto version = internal::resolveVersion(gate_, caller, *parsed);
            if (!version)
                return version.error();
            draft.target.id = version->name + "@" + std::to_string(version->version);
            draft.details.push_back(audit::textDetail("digest", version->digest));
            nlohmann::json promotions = nlohmann::json::array();
            SEALTRAIN_TRY(gate_.database().query(
                "SELECT p.statement FROM model_promotions p JOIN model_versions v ON v.id = "
                "p.version_id WHERE v.name = ? AND v.version = ? AND p.state = 'approved' ORDER "
                "BY p.id",
                {version->name, version->version},
                [&](const Statement& row) { promotions.push_back(row.text(0)); }));
            nlohmann::json document{{"format", "https://sealtrain.dev/lineage/v1"},
                                    {"model", version->name},
                                    {"version", version->version},
                                    {"digest", version->digest},
                                    {"project", version->project},
                                    {"source", version->source},
                                    {"registration", version->statement},
                                    {"promotions", std::move(promotions)},
                                    {"registry_public_key_pem", key_->publicKey().toPem()}};
            if (version->imported()) {
                SEALTRAIN_TRY(checkVersionFiles(*version));
                return document.dump(2) + "\n";
            }
            auto job = internal::loadJob(gate_.database(), version->jobId);
            if (!job)
                return job.error();
            auto chain = checkedChain(version->jobId, version->step);
            if (!chain)
                return chain.error();
            nlohmann::json checkpoints = nlohmann::json::array();
            for (const CheckedCheckpoint& link : *chain)
                checkpoints.push_back({{"step", link.recorded.step},
                                       {"worker", link.recorded.worker},
                                       {"signer_public_key_pem", link.signerPem},
                                       {"envelope", link.envelope}});
            document["dataset"] = version->datasetId;
            document["job"] = {{"id", job->info.id},
                               {"name", job->info.name},
                               {"spec", job->info.specJson},
                               {"spec_sha256", job->info.specSha256}};
            document["checkpoints"] = std::move(checkpoints);
            // A fine-tuned version names the registration of the version it started from.
            if (!version->base.empty()) {
                auto named = parseModelReference(version->base);
                if (!named)
                    return named.error();
                auto base = internal::loadVersion(gate_.database(), named->name, named->version);
                if (!base)
                    return base.error();
                document["base"] = {{"model", base->name},
                                    {"version", base->version},
                                    {"digest", base->digest},
                                    {"source", base->source},
                                    {"registration", base->statement}};
            }
            return document.dump(2) + "\n";
        });
}

}  // namespace sealtrain::core
