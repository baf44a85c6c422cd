// DSSE v1: PAE, signing, verification and the JSON envelope (nlohmann::json, private to here).
#include "sealtrain/crypto/dsse.h"

#include "sealtrain/base/encoding.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace sealtrain::crypto {
namespace {

void appendText(std::vector<std::uint8_t>& out, std::string_view text)
{
    const auto bytes = asBytes(text);
    out.insert(out.end(), bytes.begin(), bytes.end());
}

// DSSE allows standard or URL-safe base64 on input; we write standard.
std::optional<std::vector<std::uint8_t>> decodeAnyBase64(std::string_view text)
{
    if (auto standard = fromBase64(text))
        return standard;
    std::string_view unpadded = text;
    while (!unpadded.empty() && unpadded.back() == '=')
        unpadded.remove_suffix(1);
    return fromBase64Url(unpadded);
}

Error malformed(const std::string& what)
{
    return Error(ErrorCode::InvalidArgument, "The DSSE envelope is malformed (" + what
                                                 + "); give the JSON file as it was signed.");
}

}  // namespace

std::vector<std::uint8_t> dssePae(std::string_view payloadType,
                                  std::span<const std::uint8_t> payload)
{
    std::vector<std::uint8_t> out;
    out.reserve(payloadType.size() + payload.size() + 32);
    appendText(out, "DSSEv1 ");
    appendText(out, std::to_string(payloadType.size()));
    appendText(out, " ");
    appendText(out, payloadType);
    appendText(out, " ");
    appendText(out, std::to_string(payload.size()));
    appendText(out, " ");
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

std::string DsseEnvelope::toJson() const
{
    nlohmann::ordered_json json;
    json["payload"] = toBase64(payload);
    json["payloadType"] = payloadType;
    auto list = nlohmann::ordered_json::array();
    for (const auto& signature : signatures) {
        nlohmann::ordered_json entry;
        if (!signature.keyid.empty())
            entry["keyid"] = signature.keyid;
        entry["sig"] = toBase64(signature.sig);
        list.push_back(std::move(entry));
    }
    json["signatures"] = std::move(list);
    return json.dump();
}

Result<DsseEnvelope> DsseEnvelope::fromJson(std::string_view json)
{
    const auto parsed = nlohmann::json::parse(json, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object())
        return malformed("not a JSON object");
    const auto payload = parsed.find("payload");
    const auto payloadType = parsed.find("payloadType");
    const auto signatures = parsed.find("signatures");
    if (payload == parsed.end() || !payload->is_string())
        return malformed("no string 'payload'");
    if (payloadType == parsed.end() || !payloadType->is_string())
        return malformed("no string 'payloadType'");
    if (signatures == parsed.end() || !signatures->is_array())
        return malformed("no array 'signatures'");

    DsseEnvelope envelope;
    envelope.payloadType = payloadType->get<std::string>();
    auto payloadBytes = decodeAnyBase64(payload->get<std::string>());
    if (!payloadBytes)
        return malformed("'payload' is not base64");
    envelope.payload = std::move(*payloadBytes);
    for (const auto& entry : *signatures) {
        if (!entry.is_object())
            return malformed("a signature is not an object");
        DsseSignature signature;
        const auto keyid = entry.find("keyid");
        if (keyid != entry.end()) {
            if (!keyid->is_string())
                return malformed("a 'keyid' is not a string");
            signature.keyid = keyid->get<std::string>();
        }
        const auto sig = entry.find("sig");
        if (sig == entry.end() || !sig->is_string())
            return malformed("a signature has no string 'sig'");
        auto sigBytes = decodeAnyBase64(sig->get<std::string>());
        if (!sigBytes)
            return malformed("a 'sig' is not base64");
        signature.sig = std::move(*sigBytes);
        envelope.signatures.push_back(std::move(signature));
    }
    return envelope;
}

DsseEnvelope signDsse(std::string_view payloadType, std::span<const std::uint8_t> payload,
                      const SigningKey& key)
{
    const auto signature = key.sign(dssePae(payloadType, payload));
    DsseEnvelope envelope;
    envelope.payloadType = std::string(payloadType);
    envelope.payload.assign(payload.begin(), payload.end());
    envelope.signatures.push_back(
        {key.publicKey().keyId(), std::vector<std::uint8_t>(signature.begin(), signature.end())});
    return envelope;
}

Result<void> verifyDsse(const DsseEnvelope& envelope, const PublicKey& trusted)
{
    const auto pae = dssePae(envelope.payloadType, envelope.payload);
    for (const auto& signature : envelope.signatures) {
        if (trusted.verify(pae, signature.sig))
            return success();
    }
    return Error(ErrorCode::Unauthenticated,
                 "No signature on the DSSE envelope verifies under the trusted key "
                     + trusted.keyId() + "; do not trust its payload.");
}

}  // namespace sealtrain::crypto
