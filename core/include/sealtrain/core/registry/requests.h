// The registry's state table (issue #50, item 1): a promotion or an export is a request one person
// makes and another decides, and every change of a request's state, who makes it and the audit
// action that records it is a row of one table, as a job's are (jobs/states.h;
// docs/registry.md, "Request states"). The Registry asks it before it writes a state and writes
// only where the request is still in the state it asked about (UPDATE … WHERE state = ?); the
// other rules of a call (the caller's permission, the digest reviewed, the files checked again)
// are checked besides.
#pragma once

#include "sealtrain/core/registry/registry.h"

#include <span>
#include <string_view>

namespace sealtrain::core {

enum class RequestKind { Promotion, Export };

// Who moves a request: whoever asked for it, or an approver of its project who did not (the
// Registry checks that it is another person).
enum class RequestMover { Requester, Approver };

[[nodiscard]] const char* requestMoverName(RequestMover mover) noexcept;

struct RequestTransition {
    RequestKind kind;
    PromotionState from;
    PromotionState to;
    RequestMover by;
    std::string_view action;  // the audit action of the entry that records the change
};

// The table, in the order docs/registry.md lists it.
[[nodiscard]] std::span<const RequestTransition> requestTransitions() noexcept;

// Whether the table holds (from → to) of a request of `kind` by `by` under `action`.
[[nodiscard]] bool requestMayMove(RequestKind kind, PromotionState from, PromotionState to,
                                  RequestMover by, std::string_view action) noexcept;

}  // namespace sealtrain::core
