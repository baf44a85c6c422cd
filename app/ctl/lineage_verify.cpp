// The lineage document's offline check (lineage_verify.h; docs/formats/registry.md).
#include "lineage_verify.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/formats/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

using nlohmann::json;

constexpr std::string_view kLineageFormat = "https://sealtrain.dev/lineage/v1";
constexpr std::string_view kInTotoType = "https://in-toto.io/Statement/v1";
constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";
constexpr std::string_view kVersionPredicate = "https://sealtrain.dev/registry/model-version/v1";
constexpr std::string_view kPromotionPredicate = "https://sealtrain.dev/registry/promotion/v1";
constexpr std::string_view kImportPredicate = "https://sealtrain.dev/registry/base-model-import/v1";

Error broken(const std::string& what)
{
    return Error(ErrorCode::Integrity,
                 fmt::format("The lineage document does not verify: {}; do not rely on it.", what));
}

std::string sha256Hex(std::string_view text)
{
    return toHex(crypto::sha256({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}));
}

// The statement inside `envelopeJson` once its signature verifies under `key`.
Result<json> signedStatement(const std::string& envelopeJson, const crypto::PublicKey& key,
                             const std::string& what)
{
    auto envelope = crypto::DsseEnvelope::fromJson(envelopeJson);
    if (!envelope)
        return broken(what + " is not a DSSE envelope");
    if (envelope->payloadType != kInTotoPayloadType)
        return broken(what + " does not carry an in-toto statement");
    if (auto verified = crypto::verifyDsse(*envelope, key); !verified)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The lineage document does not verify: the signature of {} is "
                                 "not by key {}; do not rely on it.",
                                 what, key.keyId()));
    const std::string payload(envelope->payload.begin(), envelope->payload.end());
    auto statement = json::parse(payload, nullptr, false);
    if (!statement.is_object())
        return broken(what + "'s statement is not JSON");
    return statement;
}

// Whether `statement` is an in-toto statement of `predicateType` about `model` with `digestHex`.
bool about(const json& statement, std::string_view predicateType, const std::string& model,
           const std::string& digestHex)
{
    const json& subject = statement.value("subject", json());
    return statement.value("_type", "") == kInTotoType
           && statement.value("predicateType", "") == predicateType && subject.is_array()
           && subject.size() == 1 && subject[0].value("name", "") == model
           && subject[0].value("digest", json::object()).value("sha256", "") == digestHex;
}

struct Document {
    std::string model;
    std::int64_t version = 0;
    std::string digest;
    std::string source = "job";  // or "import": no dataset, job or checkpoints
    std::string dataset;
    std::int64_t job = 0;
    std::string spec;
    std::string registration;
    json checkpoints;
    json promotions;
    json base;  // a fine-tuned version's: the registration of the version it started from
};

Result<Document> readDocument(std::string_view text)
{
    const json parsed = json::parse(text, nullptr, false);
    Document document;
    try {
        if (!parsed.is_object() || parsed.at("format").get<std::string>() != kLineageFormat)
            return broken("it is not a Sealtrain lineage document (format "
                          + std::string(kLineageFormat) + ")");
        document.model = parsed.at("model").get<std::string>();
        document.version = parsed.at("version").get<std::int64_t>();
        document.digest = parsed.at("digest").get<std::string>();
        document.source = parsed.value("source", std::string("job"));
        document.registration = parsed.at("registration").get<std::string>();
        document.promotions = parsed.at("promotions");
        if (document.source == "import") {
            document.checkpoints = json::array();
        } else {
            document.dataset = parsed.at("dataset").get<std::string>();
            document.job = parsed.at("job").at("id").get<std::int64_t>();
            document.spec = parsed.at("job").at("spec").get<std::string>();
            document.checkpoints = parsed.at("checkpoints");
            document.base = parsed.value("base", json());
        }
    } catch (const json::exception&) {
        return broken("a field of docs/formats/registry.md is missing or of another type");
    }
    if (!document.digest.starts_with("sha256:") || !document.checkpoints.is_array()
        || !document.promotions.is_array())
        return broken("its digest, checkpoints or promotions are malformed");
    return document;
}

// Every approved promotion, signed by the registry, approved by someone other than who asked.
Result<void> verifyPromotions(const Document& document, const crypto::PublicKey& registryKey,
                              LineageVerdict& verdict)
{
    const std::string digestHex = document.digest.substr(7);
    for (std::size_t i = 0; i < document.promotions.size(); ++i) {
        if (!document.promotions[i].is_string())
            return broken(fmt::format("promotion {} is malformed", i + 1));
        auto promotion = signedStatement(document.promotions[i].get<std::string>(), registryKey,
                                         fmt::format("promotion {}", i + 1));
        if (!promotion)
            return promotion.error();
        if (!about(*promotion, kPromotionPredicate, verdict.model, digestHex))
            return broken(fmt::format("promotion {} is not of {} with digest {}", i + 1,
                                      verdict.model, document.digest));
        const json& approval = (*promotion)["predicate"];
        const std::string asked = approval.value("requested_by", "");
        const std::string approved = approval.value("approved_by", "");
        if (approved.empty() || approved == asked)
            return broken(fmt::format("promotion {} was not approved by a second person", i + 1));
        verdict.checked.push_back(fmt::format("promotion to {} (promotion {}): asked by {}, "
                                              "approved by {}; signature by registry key {} "
                                              "verified",
                                              approval.value("alias", "?"),
                                              approval.value("promotion", std::int64_t{0}), asked,
                                              approved, registryKey.keyId()));
    }
    return success();
}

// An imported base model's registration: what was imported, by whom, signed by the registry.
Result<LineageVerdict> verifyImport(const Document& document, const crypto::PublicKey& registryKey,
                                    LineageVerdict verdict)
{
    auto registration =
        signedStatement(document.registration, registryKey, "the import of " + verdict.model);
    if (!registration)
        return registration.error();
    if (!about(*registration, kImportPredicate, verdict.model, document.digest.substr(7)))
        return broken("the import is not of " + verdict.model + " with digest " + document.digest);
    const json& predicate = (*registration)["predicate"];
    std::vector<std::string> sources;
    const json named = predicate.value("sources", json::object());
    for (const auto& [file, sha256] : named.items())
        sources.push_back(fmt::format(
            "{} {}", file, sha256.is_string() ? sha256.get<std::string>() : std::string("?")));
    verdict.checked.push_back(fmt::format(
        "import of {} ({}), imported by {} from {}: signature by registry key {} verified",
        verdict.model, document.digest, predicate.value("imported_by", "?"),
        fmt::join(sources, ", "), registryKey.keyId()));
    SEALTRAIN_TRY(verifyPromotions(document, registryKey, verdict));
    return verdict;
}

// A fine-tuned version's base: the registration of the version its job started from, signed by
// the registry and about the digest the registration names.
Result<std::optional<trainer::CheckpointReference>> verifyBase(const Document& document,
                                                               const json& predicate,
                                                               const crypto::PublicKey& registryKey,
                                                               LineageVerdict& verdict)
{
    if (!predicate.contains("base"))
        return std::optional<trainer::CheckpointReference>();
    const std::string named = predicate.value("base", "");
    if (!document.base.is_object() || !document.base.value("registration", json()).is_string())
        return broken("the registration names base model " + named
                      + " but the document does not hold its registration");
    const std::string label = fmt::format("{}@{}", document.base.value("model", ""),
                                          document.base.value("version", std::int64_t{0}));
    const std::string digest = document.base.value("digest", "");
    if (label != named || !digest.starts_with("sha256:"))
        return broken("the base model is not " + named);
    auto base = signedStatement(document.base["registration"].get<std::string>(), registryKey,
                                "the registration of base model " + label);
    if (!base)
        return base.error();
    const bool imported = document.base.value("source", "") == "import";
    if (!about(*base, imported ? kImportPredicate : kVersionPredicate, label, digest.substr(7)))
        return broken("the base model's registration is not of " + label + " with digest "
                      + digest);
    verdict.checked.push_back(fmt::format("base model {} ({}, {}): signature by registry key {} "
                                          "verified",
                                          label, digest, imported ? "imported" : "trained here",
                                          registryKey.keyId()));
    return std::optional(trainer::CheckpointReference{label, digest.substr(7)});
}

}  // namespace

Result<LineageVerdict> verifyLineage(std::string_view text, const crypto::PublicKey& registryKey)
{
    auto read = readDocument(text);
    if (!read)
        return read.error();
    const Document& document = *read;
    LineageVerdict verdict;
    verdict.model = document.model + "@" + std::to_string(document.version);
    verdict.digest = document.digest;
    const std::string digestHex = document.digest.substr(7);
    if (document.source == "import")
        return verifyImport(document, registryKey, std::move(verdict));

    // The registration, signed by the registry.
    auto registration =
        signedStatement(document.registration, registryKey, "the registration of " + verdict.model);
    if (!registration)
        return registration.error();
    if (!about(*registration, kVersionPredicate, verdict.model, digestHex))
        return broken("the registration is not of " + verdict.model + " with digest "
                      + document.digest);
    const json& predicate = (*registration)["predicate"];
    const json& job = predicate.value("job", json::object());
    if (predicate.value("dataset", "") != document.dataset
        || job.value("id", std::int64_t{0}) != document.job)
        return broken("the registration names another dataset or job");
    verdict.checked.push_back(fmt::format("registration of {} ({}), registered by {}: signature by "
                                          "registry key {} verified",
                                          verdict.model, document.digest,
                                          predicate.value("registered_by", "?"),
                                          registryKey.keyId()));

    // The job's spec and its approval by a second person, as the registration states them.
    const std::string specSha256 = sha256Hex(document.spec);
    if (job.value("spec_sha256", "") != specSha256)
        return broken(
            fmt::format("job {}'s spec is not the one the registration names", document.job));
    const std::string submitter = job.value("submitter", "");
    const std::string approver = job.value("approver", "");
    if (approver.empty() || approver == submitter)
        return broken(fmt::format("job {} was not approved by someone other than its submitter",
                                  document.job));
    verdict.checked.push_back(fmt::format("job {}: spec SHA-256 {} as registered; submitted by "
                                          "{}, approved by {}",
                                          document.job, specSha256, submitter, approver));
    auto base = verifyBase(document, predicate, registryKey, verdict);
    if (!base)
        return base.error();

    // The checkpoint chain: each envelope the registration names, signed by its worker's key,
    // each the parent of the next, the last the version's digest.
    const json& named = predicate.value("checkpoints", json::array());
    if (!named.is_array() || named.size() != document.checkpoints.size() || named.empty())
        return broken("its checkpoints are not the chain the registration names");
    std::optional<std::string> previous;
    for (std::size_t i = 0; i < named.size(); ++i) {
        const json& link = document.checkpoints[i];
        const json& expected = named[i];
        if (!link.is_object() || !link.value("envelope", json()).is_string()
            || !link.value("signer_public_key_pem", json()).is_string())
            return broken(fmt::format("checkpoint {} of the chain is malformed", i + 1));
        const std::string envelope = link["envelope"].get<std::string>();
        const std::int64_t step = expected.value("step", std::int64_t{0});
        const std::string what = fmt::format("the checkpoint at step {}", step);
        if (sha256Hex(envelope) != expected.value("envelope_sha256", ""))
            return broken(what + "'s envelope is not the one the registration names");
        auto signer = crypto::PublicKey::fromPem(link["signer_public_key_pem"].get<std::string>());
        if (!signer || signer->keyId() != expected.value("signer_key_id", ""))
            return broken(what + "'s signer is not the key the registration names");
        auto statement = signedStatement(envelope, *signer, what);
        if (!statement)
            return statement.error();
        auto lineage = trainer::parseLineageStatement(statement->dump());
        if (!lineage)
            return broken(what + "'s statement is not a checkpoint's lineage");
        if (lineage->job != std::to_string(document.job) || lineage->dataset != document.dataset
            || static_cast<std::int64_t>(lineage->step) != step
            || lineage->subject.sha256 != expected.value("plaintext_sha256", ""))
            return broken(what + " is of another job, dataset, step or plaintext");
        if (previous && (!lineage->parent || lineage->parent->sha256 != *previous))
            return broken(what + " does not name the checkpoint before it as its parent");
        if (lineage->base != *base)
            return broken(what
                          + (*base ? " does not name " + (*base)->name + " as its base"
                                   : " names a base model its registration does not"));
        previous = lineage->subject.sha256;
        verdict.checked.push_back(fmt::format("checkpoint at step {} ({}), worker {}: signature "
                                              "by key {} verified{}",
                                              step, lineage->subject.sha256,
                                              expected.value("worker", "?"), signer->keyId(),
                                              i != 0  ? std::string(", its parent the one before")
                                              : *base ? ", names base model " + (*base)->name
                                                      : std::string()));
    }
    if (*previous != digestHex)
        return broken("the chain's last checkpoint is not the version's digest");

    SEALTRAIN_TRY(verifyPromotions(document, registryKey, verdict));
    return verdict;
}

}  // namespace sealtrain::ctl
