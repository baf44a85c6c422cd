// A TPM 2.0 monotonic counter as a witness (issue #49): an NV index of type counter that counts
// the log's signed heads. The TPM only ever increments a counter, so a copy of the data directory
// taken before some heads (with its witness files, or not) finds the counter ahead of its heads
// and is refused; no one holding the directory can turn it back (docs/formats/audit.md).
//
// The counter lives in the owner hierarchy, read and incremented with the owner's authorisation:
// empty, as a distribution leaves the TPM, or the owner password its administrator set (given
// to the control plane in a file, never written anywhere by it). The data directory keeps `base`,
// the counter's value minus the heads it had when the counter was attached, so that heads = counter
// - base.
#pragma once

#include "sealtrain/audit/witness.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sealtrain::audit {

struct TpmCounterLocation {
    std::uint32_t index = 0;  // an owner NV index, 0x01000000 to 0x01BFFFFF
    std::string tcti;         // the TSS2 TCTI ("device:/dev/tpmrm0", "swtpm:port=2321"); empty:
                              // the TSS default
    // The owner hierarchy's authorisation (at most 64 bytes), when its administrator set one;
    // not part of the location's text. Null: empty.
    std::shared_ptr<const crypto::SecretBytes> ownerAuth;
};

// "0x01500016" or "0x01500016@swtpm:host=127.0.0.1,port=2321". InvalidArgument, in one sentence.
[[nodiscard]] Result<TpmCounterLocation> parseTpmCounterLocation(std::string_view text);
[[nodiscard]] std::string formatTpmCounterLocation(const TpmCounterLocation& where);

// The counter's value; NotFound when the index is not defined, Io when the TPM cannot be reached,
// PermissionDenied when it refuses the owner's authorisation (also below).
[[nodiscard]] Result<std::uint64_t> readTpmCounter(const TpmCounterLocation& where);
// Defines the index as a counter and increments it once (a counter reads only once written);
// returns its value. AlreadyExists when the index is defined.
[[nodiscard]] Result<std::uint64_t> defineTpmCounter(const TpmCounterLocation& where);

class TpmCounterWitness final : public HeadWitness {
public:
    TpmCounterWitness(TpmCounterLocation where, std::int64_t base)
        : where_(std::move(where))
        , base_(base)
    {
    }
    [[nodiscard]] std::string location() const override
    {
        return "tpm:" + formatTpmCounterLocation(where_);
    }
    // Increments the counter until it counts `storedHeads` (more than once when an earlier
    // increment failed or a crash came between storing a head and counting it).
    [[nodiscard]] Result<void> record(const std::string& signedNote,
                                      std::size_t storedHeads) override;
    // Integrity when the counter is ahead of the store's heads: the store is an older copy.
    // A counter a few behind (a crash between storing a head and counting it) is brought level.
    [[nodiscard]] Result<void> check(const WitnessedLog& log) override;
    [[nodiscard]] const TpmCounterLocation& where() const noexcept { return where_; }
    [[nodiscard]] std::int64_t base() const noexcept { return base_; }
    // After an accepted loss: the counter's heads are counted from `base` on.
    void rebase(std::int64_t base) noexcept { base_ = base; }

private:
    TpmCounterLocation where_;
    std::int64_t base_;
};

}  // namespace sealtrain::audit
