// The TPM counter witness (tpm_counter_witness.h) over the TSS2 enhanced system API (ESAPI).
#include "sealtrain/audit/tpm_counter_witness.h"

#include "sealtrain/base/wipe.h"

#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include <charconv>
#include <cstring>
#include <memory>
#include <span>

namespace sealtrain::audit {
namespace {

constexpr std::uint32_t kFirstOwnerIndex = 0x01000000;
constexpr std::uint32_t kLastOwnerIndex = 0x01BFFFFF;
// More heads than this missing from the counter is not a crash's doing: another TPM, or an index
// defined anew. Bringing it level would hide that, so it is refused.
constexpr std::uint64_t kMostHeadsBehind = 16;

std::string describe(TSS2_RC rc)
{
    const char* text = Tss2_RC_Decode(rc);
    return text != nullptr ? std::string(text) : "TSS2 error " + std::to_string(rc);
}

// The TPM refused the authorisation (a wrong owner password, or none where one is set), or
// locked it out after too many: the operator's to fix, not the TPM's.
bool authRefused(TSS2_RC rc)
{
    const TSS2_RC code = rc & 0xFFFFU;
    if ((code & TPM2_RC_FMT1) != 0) {
        const TSS2_RC number = code & (TPM2_RC_FMT1 | 0x3FU);
        return number == TPM2_RC_BAD_AUTH || number == TPM2_RC_AUTH_FAIL;
    }
    return code == TPM2_RC_LOCKOUT;
}

Error refusedAuth(const std::string& what)
{
    return Error(ErrorCode::PermissionDenied,
                 "The TPM refused the owner hierarchy's authorisation to " + what
                     + "; give the control plane the owner password the TPM's administrator "
                       "set (--audit-witness-tpm-owner-file), or wait out the TPM's lockout.");
}

// One connection to the TPM, closed when it goes.
class Tpm final {
public:
    static Result<std::unique_ptr<Tpm>> open(const TpmCounterLocation& where)
    {
        std::unique_ptr<Tpm> tpm(new Tpm);
        TSS2_RC rc =
            Tss2_TctiLdr_Initialize(where.tcti.empty() ? nullptr : where.tcti.c_str(), &tpm->tcti_);
        if (rc != TSS2_RC_SUCCESS)
            return Error(ErrorCode::Io,
                         "Cannot reach the TPM"
                             + (where.tcti.empty() ? std::string() : " at '" + where.tcti + "'")
                             + " (" + describe(rc)
                             + "); check that it is present and that this account "
                               "may use it.");
        rc = Esys_Initialize(&tpm->esys_, tpm->tcti_, nullptr);
        if (rc != TSS2_RC_SUCCESS)
            return Error(ErrorCode::Io, "Cannot open a session with the TPM (" + describe(rc)
                                            + "); check that it is present and started.");
        if (where.ownerAuth) {
            TPM2B_AUTH auth{};
            if (where.ownerAuth->size() > sizeof auth.buffer)
                return Error(ErrorCode::InvalidArgument,
                             "The TPM owner password is longer than the 64 bytes a TPM "
                             "takes; give the one its administrator set.");
            auth.size = static_cast<UINT16>(where.ownerAuth->size());
            std::memcpy(auth.buffer, where.ownerAuth->bytes().data(), where.ownerAuth->size());
            rc = Esys_TR_SetAuth(tpm->esys_, ESYS_TR_RH_OWNER, &auth);
            wipeMemory(std::span<std::uint8_t>(auth.buffer, sizeof auth.buffer));
            if (rc != TSS2_RC_SUCCESS)
                return Error(ErrorCode::Io, "Cannot give the TPM the owner's authorisation ("
                                                + describe(rc) + "); check the TPM.");
        }
        return tpm;
    }
    Tpm(const Tpm&) = delete;
    Tpm& operator=(const Tpm&) = delete;
    ~Tpm()
    {
        if (esys_ != nullptr)
            Esys_Finalize(&esys_);
        if (tcti_ != nullptr)
            Tss2_TctiLdr_Finalize(&tcti_);
    }

    // The index's handle; NotFound when it is not defined.
    Result<ESYS_TR> index(std::uint32_t index) const
    {
        ESYS_TR handle = ESYS_TR_NONE;
        const TSS2_RC rc =
            Esys_TR_FromTPMPublic(esys_, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &handle);
        if (rc != TSS2_RC_SUCCESS)
            return Error(ErrorCode::NotFound, "The TPM has no NV index " + hex(index)
                                                  + "; attach the witness again to define it.");
        return handle;
    }

    Result<std::uint64_t> read(std::uint32_t index) const
    {
        auto handle = this->index(index);
        if (!handle)
            return handle.error();
        TPM2B_MAX_NV_BUFFER* data = nullptr;
        const TSS2_RC rc = Esys_NV_Read(esys_, ESYS_TR_RH_OWNER, *handle, ESYS_TR_PASSWORD,
                                        ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data);
        if (authRefused(rc))
            return refusedAuth("read the counter " + hex(index));
        if (rc != TSS2_RC_SUCCESS)
            return Error(ErrorCode::Io, "Cannot read the TPM counter " + hex(index) + " ("
                                            + describe(rc)
                                            + "); check that it is a counter the owner may read.");
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < data->size && i < 8; ++i)
            value = (value << 8U) | data->buffer[i];
        const bool whole = data->size == 8;
        Esys_Free(data);
        if (!whole)
            return Error(ErrorCode::Integrity, "The TPM's NV index " + hex(index)
                                                   + " is not an 8-byte counter; name another "
                                                     "index for the witness.");
        return value;
    }

    Result<void> increment(std::uint32_t index) const
    {
        auto handle = this->index(index);
        if (!handle)
            return handle.error();
        const TSS2_RC rc = Esys_NV_Increment(esys_, ESYS_TR_RH_OWNER, *handle, ESYS_TR_PASSWORD,
                                             ESYS_TR_NONE, ESYS_TR_NONE);
        if (authRefused(rc))
            return refusedAuth("increment the counter " + hex(index));
        if (rc != TSS2_RC_SUCCESS)
            return Error(ErrorCode::Io, "Cannot increment the TPM counter " + hex(index) + " ("
                                            + describe(rc) + "); check the TPM.");
        return success();
    }

    Result<void> define(std::uint32_t index) const
    {
        TPM2B_AUTH noAuth{};
        TPM2B_NV_PUBLIC info{};
        info.nvPublic.nvIndex = index;
        info.nvPublic.nameAlg = TPM2_ALG_SHA256;
        info.nvPublic.attributes =
            TPMA_NV_OWNERWRITE | TPMA_NV_OWNERREAD | TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD
            | (static_cast<TPMA_NV>(TPM2_NT_COUNTER) << TPMA_NV_TPM2_NT_SHIFT);
        info.nvPublic.dataSize = 8;
        ESYS_TR handle = ESYS_TR_NONE;
        const TSS2_RC rc = Esys_NV_DefineSpace(esys_, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD,
                                               ESYS_TR_NONE, ESYS_TR_NONE, &noAuth, &info, &handle);
        if (authRefused(rc))
            return refusedAuth("define the counter " + hex(index));
        if (rc != TSS2_RC_SUCCESS)
            return Error(ErrorCode::Io, "Cannot define the TPM counter " + hex(index) + " ("
                                            + describe(rc)
                                            + "); check the owner's authorisation and free NV "
                                              "space.");
        return success();
    }

    static std::string hex(std::uint32_t index)
    {
        return formatTpmCounterLocation(TpmCounterLocation{index, {}, nullptr});
    }

private:
    Tpm() = default;
    TSS2_TCTI_CONTEXT* tcti_ = nullptr;
    ESYS_CONTEXT* esys_ = nullptr;
};

}  // namespace

Result<TpmCounterLocation> parseTpmCounterLocation(std::string_view text)
{
    TpmCounterLocation where;
    const auto at = text.find('@');
    std::string_view number = text.substr(0, at);
    if (at != std::string_view::npos)
        where.tcti = std::string(text.substr(at + 1));
    const Error bad(ErrorCode::InvalidArgument,
                    "A TPM counter is named by an owner NV index in hex, from 0x01000000 to "
                    "0x01BFFFFF, optionally followed by @TCTI (for example "
                    "tpm:0x01500016@device:/dev/tpmrm0).");
    if (!number.starts_with("0x") || number.size() != 10)
        return bad;
    number.remove_prefix(2);
    const auto parsed =
        std::from_chars(number.data(), number.data() + number.size(), where.index, 16);
    if (parsed.ec != std::errc{} || parsed.ptr != number.data() + number.size()
        || where.index < kFirstOwnerIndex || where.index > kLastOwnerIndex
        || (at != std::string_view::npos && where.tcti.empty()))
        return bad;
    return where;
}

std::string formatTpmCounterLocation(const TpmCounterLocation& where)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text = "0x";
    for (int shift = 28; shift >= 0; shift -= 4)
        text += kDigits[(where.index >> static_cast<unsigned>(shift)) & 0xFU];
    if (!where.tcti.empty())
        text += "@" + where.tcti;
    return text;
}

Result<std::uint64_t> readTpmCounter(const TpmCounterLocation& where)
{
    auto tpm = Tpm::open(where);
    if (!tpm)
        return tpm.error();
    return (*tpm)->read(where.index);
}

Result<std::uint64_t> defineTpmCounter(const TpmCounterLocation& where)
{
    auto tpm = Tpm::open(where);
    if (!tpm)
        return tpm.error();
    if ((*tpm)->index(where.index).ok())
        return Error(ErrorCode::AlreadyExists,
                     "The TPM already has an NV index " + Tpm::hex(where.index)
                         + "; name a free index, or adopt this one as docs/operations/"
                           "data-directory.md#witnesses says.");
    SEALTRAIN_TRY((*tpm)->define(where.index));
    SEALTRAIN_TRY((*tpm)->increment(where.index));
    return (*tpm)->read(where.index);
}

Result<void> TpmCounterWitness::record(const std::string& /*signedNote*/, std::size_t storedHeads)
{
    auto tpm = Tpm::open(where_);
    if (!tpm)
        return tpm.error();
    auto value = (*tpm)->read(where_.index);
    if (!value)
        return value.error();
    // What the counter reads when it has counted every stored head (base may be negative: a
    // counter defined for a log that already had more heads than the counter's first value).
    const auto wanted = static_cast<std::uint64_t>(base_ + static_cast<std::int64_t>(storedHeads));
    for (std::uint64_t at = *value; at < wanted; ++at)
        SEALTRAIN_TRY((*tpm)->increment(where_.index));
    return success();
}

Result<void> TpmCounterWitness::check(const WitnessedLog& log)
{
    auto value = readTpmCounter(where_);
    if (!value)
        return value.error().code() == ErrorCode::NotFound ? value.error().because(kMissing)
                                                           : value.error();
    // Counted heads: the counter's value less its base; the store's: the heads it holds.
    const std::int64_t counted = static_cast<std::int64_t>(*value) - base_;
    const auto heads = static_cast<std::int64_t>(log.storedHeads);
    const std::string counter = "The TPM counter " + formatTpmCounterLocation(where_);
    if (counted > heads)
        return Error(ErrorCode::Integrity,
                     counter + " has counted " + std::to_string(counted)
                         + " signed heads but the database holds " + std::to_string(heads)
                         + ", so the data directory is an older copy (a rollback would bring "
                           "back revoked sessions and grants); restore the newest data "
                           "directory, or see docs/operations/data-directory.md to accept the "
                           "loss.")
            .because(kAhead);
    if (heads - counted > static_cast<std::int64_t>(kMostHeadsBehind))
        return Error(ErrorCode::Integrity,
                     counter + " has counted " + std::to_string(counted)
                         + " signed heads, far fewer than the database's " + std::to_string(heads)
                         + ", so it is another TPM's or was defined anew; see "
                           "docs/operations/data-directory.md#witnesses to attach it again.")
            .because(kBehind);
    return record({}, log.storedHeads);
}

}  // namespace sealtrain::audit
