// Verifying a live log where it is kept (the control plane's Audit.VerifyLog): every stored entry
// re-read, decoded and chained, every stored signed head checked against the log's key and the
// tree the entries make, and the witness file's heads found in the log. What a reviewer checks
// offline in a bundle (bundle.h's verifyBundle), checked here on the store itself, so that an
// entry or head changed in the database after the control plane opened it is found.
#pragma once

#include "sealtrain/audit/store.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::audit {

struct StoreVerification {
    std::optional<Error> failure;  // the first check that failed; nullopt when all held
    std::uint64_t entries = 0;     // entries decoded and chained
    std::uint64_t heads = 0;       // stored signed heads verified
    std::uint64_t witnessHeads = 0;
    std::optional<TreeHead> newestHead;

    [[nodiscard]] bool ok() const noexcept { return !failure.has_value(); }
};

// Streams the store from entry 0 in pages (bounded memory). `witnessHeads`: the witness file's
// signed notes (readWitness), empty when the log keeps none. A failure names the entry or head
// and what to do.
[[nodiscard]] StoreVerification verifyStore(const AuditStore& store, const NoteVerifier& key,
                                            const std::vector<std::string>& witnessHeads);

}  // namespace sealtrain::audit
