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
#include <functional>
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
// and what to do. `betweenPages`, when given, is called after each page, with no read open: a
// caller that holds a lock others wait on lets them in there (the compliance report). What is
// verified is what the store held when it began: the heads and the entry count are read first,
// and entries or heads appended meanwhile are left to the next verification.
[[nodiscard]] StoreVerification verifyStore(const AuditStore& store, const NoteVerifier& key,
                                            const std::vector<std::string>& witnessHeads,
                                            const std::function<void()>& betweenPages = {});

}  // namespace sealtrain::audit
