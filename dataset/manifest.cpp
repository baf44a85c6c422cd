// The dataset manifest's canonical JSON, its id, and loading it back (manifest.h).
#include "sealtrain/dataset/manifest.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <nlohmann/json.hpp>

namespace sealtrain::dataset {

using nlohmann::json;

const char* splitName(Split split) noexcept
{
    return split == Split::Train ? "train" : "validation";
}

namespace {

// nlohmann::json keeps object keys in a std::map, so dump() writes them sorted by their bytes.
std::string canonicalDump(const json& value)
{
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json splitToJson(const SplitEntry& split)
{
    json shards = json::array();
    for (const ShardEntry& shard : split.shards) {
        shards.push_back({{"file", shard.file},
                          {"object_id", shard.objectId},
                          {"sha256", shard.sha256},
                          {"tokens", shard.tokens}});
    }
    return {{"records", split.records}, {"tokens", split.tokens}, {"shards", shards}};
}

SplitEntry splitFromJson(const json& value)
{
    SplitEntry split;
    split.records = value.at("records").get<std::uint64_t>();
    split.tokens = value.at("tokens").get<std::uint64_t>();
    for (const json& shard : value.at("shards")) {
        split.shards.push_back(
            {shard.at("file").get<std::string>(), shard.at("object_id").get<std::string>(),
             shard.at("sha256").get<std::string>(), shard.at("tokens").get<std::uint64_t>()});
    }
    return split;
}

json toJson(const Manifest& m)
{
    json sources = json::array();
    for (const SourceEntry& source : m.sources)
        sources.push_back(
            {{"path", source.path}, {"sha256", source.sha256}, {"bytes", source.bytes}});
    json tokenizer = {{"id", m.tokenizer.id},
                      {"vocab_size", m.tokenizer.vocabSize},
                      {"files", m.tokenizer.fileSha256}};
    tokenizer["end_of_text"] = m.tokenizer.endOfText ? json(*m.tokenizer.endOfText) : json(nullptr);
    return {{"format", kManifestFormat},
            {"name", m.name},
            {"classification", m.classification},
            {"creator", m.creator},
            {"created_at", m.createdAt},
            {"parent", m.parent.empty() ? json(nullptr) : json(m.parent)},
            {"input", {{"format", m.inputFormat}, {"field", m.inputField}}},
            {"tokenizer", tokenizer},
            {"token_bytes", m.tokenBytes},
            {"tokens_per_shard", m.tokensPerShard},
            {"split",
             {{"rule", "record-sha256"}, {"validation_basis_points", m.validationBasisPoints}}},
            {"pii_redacted", m.piiRedacted},
            {"sources", sources},
            {"counts", m.counts},
            {"train", splitToJson(m.train)},
            {"validation", splitToJson(m.validation)}};
}

Error integrity(const std::string& what)
{
    return {ErrorCode::Integrity, "The dataset manifest " + what
                                      + "; restore the dataset from a trusted copy or import it "
                                        "again."};
}

// A shard is a file directly inside the dataset's folder: a name with a separator, "..", or
// nothing at all would make the reader open a file elsewhere (or the folder itself).
bool isPlainFileName(std::string_view name)
{
    return !name.empty() && name != "." && name != ".."
           && name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

// The first shard whose name is not a plain file name, if any.
const ShardEntry* firstStrayShard(const Manifest& m)
{
    for (const SplitEntry* split : {&m.train, &m.validation}) {
        for (const ShardEntry& shard : split->shards) {
            if (!isPlainFileName(shard.file))
                return &shard;
        }
    }
    return nullptr;
}

}  // namespace

std::string Manifest::canonicalJson() const
{
    return canonicalDump(toJson(*this));
}

std::string Manifest::id() const
{
    return "sha256:" + toHex(crypto::sha256(asBytes(canonicalJson())));
}

Result<Manifest> parseManifest(std::string_view bytes)
{
    const json value = json::parse(bytes, nullptr, false);
    if (value.is_discarded() || !value.is_object())
        return integrity("is not JSON");
    if (value.value("format", std::string()) != kManifestFormat)
        return Error(ErrorCode::Unsupported,
                     "The dataset manifest is not a sealtrain-dataset/v1 manifest; use a "
                     "Sealtrain version that knows its format.");
    if (canonicalDump(value) != bytes)
        return integrity("is not in canonical form (it was edited by hand or by a tool)");
    try {
        Manifest m;
        m.name = value.at("name").get<std::string>();
        m.classification = value.at("classification").get<std::string>();
        m.creator = value.at("creator").get<std::string>();
        m.createdAt = value.at("created_at").get<std::string>();
        if (!value.at("parent").is_null())
            m.parent = value.at("parent").get<std::string>();
        m.inputFormat = value.at("input").at("format").get<std::string>();
        m.inputField = value.at("input").at("field").get<std::string>();
        const json& tokenizer = value.at("tokenizer");
        m.tokenizer.id = tokenizer.at("id").get<std::string>();
        m.tokenizer.vocabSize = tokenizer.at("vocab_size").get<std::uint32_t>();
        if (!tokenizer.at("end_of_text").is_null())
            m.tokenizer.endOfText = tokenizer.at("end_of_text").get<std::uint32_t>();
        m.tokenizer.fileSha256 = tokenizer.at("files").get<std::map<std::string, std::string>>();
        m.tokenBytes = value.at("token_bytes").get<std::uint32_t>();
        m.tokensPerShard = value.at("tokens_per_shard").get<std::uint64_t>();
        m.validationBasisPoints =
            value.at("split").at("validation_basis_points").get<std::uint32_t>();
        m.piiRedacted = value.at("pii_redacted").get<bool>();
        for (const json& source : value.at("sources")) {
            m.sources.push_back({source.at("path").get<std::string>(),
                                 source.at("sha256").get<std::string>(),
                                 source.at("bytes").get<std::uint64_t>()});
        }
        m.counts = value.at("counts").get<std::map<std::string, std::uint64_t>>();
        m.train = splitFromJson(value.at("train"));
        m.validation = splitFromJson(value.at("validation"));
        if ((m.tokenBytes != 2 && m.tokenBytes != 4) || m.tokensPerShard == 0)
            return integrity("has an impossible token width or shard size");
        if (const ShardEntry* stray = firstStrayShard(m))
            return integrity("names the shard '" + stray->file
                             + "', which is not a plain file name inside the dataset's folder");
        // Serialising what was read must give the same bytes: no unknown or missing fields.
        if (m.canonicalJson() != bytes)
            return integrity("has fields this version does not know");
        return m;
    } catch (const json::exception&) {
        return integrity("misses a field or has one of the wrong type");
    }
}

std::string shardMetadata(Split split, std::uint64_t index, std::uint32_t tokenBytes)
{
    return canonicalDump(json{{"format", "sealtrain-tokens/v1"},
                              {"index", index},
                              {"split", splitName(split)},
                              {"token_bytes", tokenBytes}});
}

std::string shardFileName(Split split, std::uint64_t index)
{
    std::string number = std::to_string(index);
    if (number.size() < 5)
        number.insert(0, 5 - number.size(), '0');
    return std::string(splitName(split)) + "-" + number + ".sealed";
}

namespace {

Result<std::string> readManifestBytes(const std::filesystem::path& folder)
{
    const auto path = folder / kManifestFileName;
    auto bytes = readWholeFile(path);
    if (!bytes)
        return Error(ErrorCode::NotFound, "There is no dataset manifest at '" + path.string()
                                              + "'; check the dataset folder.");
    return bytes;
}

}  // namespace

Result<void> signManifest(const std::filesystem::path& folder, const crypto::SigningKey& key)
{
    auto bytes = readManifestBytes(folder);
    if (!bytes)
        return bytes.error();
    const auto signature = key.sign(asBytes(*bytes));
    return writeFileAtomically(folder / kManifestSignatureFileName,
                               asBytes(toBase64(signature) + "\n"),
                               AtomicFileSink::Overwrite::Allow);
}

Result<void> verifyManifestSignature(const std::filesystem::path& folder,
                                     const crypto::PublicKey& trusted)
{
    auto bytes = readManifestBytes(folder);
    if (!bytes)
        return bytes.error();
    const auto path = folder / kManifestSignatureFileName;
    auto read = readWholeFile(path);
    if (!read)
        return Error(ErrorCode::Unauthenticated,
                     "The dataset in '" + folder.string()
                         + "' is not signed (there is no manifest.sig); register it with the "
                           "control plane or restore it from a trusted copy.");
    std::string text = std::move(*read);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.pop_back();
    const auto signature = fromBase64(text);
    if (!signature || signature->size() != crypto::kEd25519SignatureSize
        || !trusted.verify(asBytes(*bytes), *signature))
        return Error(ErrorCode::Unauthenticated,
                     "The dataset manifest in '" + folder.string()
                         + "' is not signed by the platform key " + trusted.keyId()
                         + "; restore the dataset from a trusted copy or check the platform key.");
    return success();
}

Result<Manifest> loadManifest(const std::filesystem::path& folder, const std::string& expectedId)
{
    std::string expected = expectedId;
    if (expected.empty())
        expected = "sha256:" + folder.filename().string();
    if (expected.size() != 71 || expected.rfind("sha256:", 0) != 0 || !fromHex(expected.substr(7)))
        return Error(ErrorCode::InvalidArgument,
                     "The dataset id '" + expected
                         + "' is not 'sha256:' and 64 hex digits; give the id the import printed.");
    auto read = readManifestBytes(folder);
    if (!read)
        return read.error();
    const std::string& bytes = *read;
    const std::string actual = "sha256:" + toHex(crypto::sha256(asBytes(bytes)));
    if (actual != expected)
        return integrity("in '" + folder.string() + "' does not hash to the dataset id " + expected
                         + " (it was edited or belongs to another dataset)");
    return parseManifest(bytes);
}

}  // namespace sealtrain::dataset
