// The registry's state table (requests.h).
#include "sealtrain/core/registry/requests.h"

#include <array>

namespace sealtrain::core {

namespace {

using K = RequestKind;
using S = PromotionState;
using M = RequestMover;

// A request is made pending (model.promote, model.export_request: no state before it); these are
// its moves after. An export's download keeps it approved and is the asker's alone.
constexpr std::array kTransitions{
    RequestTransition{K::Promotion, S::Pending, S::Approved, M::Approver, "model.promote_approve"},
    RequestTransition{K::Promotion, S::Pending, S::Rejected, M::Approver, "model.promote_reject"},
    RequestTransition{K::Export, S::Pending, S::Approved, M::Approver, "model.export_approve"},
    RequestTransition{K::Export, S::Pending, S::Rejected, M::Approver, "model.export_reject"},
    RequestTransition{K::Export, S::Approved, S::Approved, M::Requester, "model.export"},
};

}  // namespace

const char* requestMoverName(RequestMover mover) noexcept
{
    switch (mover) {
    case RequestMover::Requester: return "requester";
    case RequestMover::Approver: return "approver";
    }
    return "unknown";
}

std::span<const RequestTransition> requestTransitions() noexcept
{
    return kTransitions;
}

bool requestMayMove(RequestKind kind, PromotionState from, PromotionState to, RequestMover by,
                    std::string_view action) noexcept
{
    for (const RequestTransition& row : kTransitions)
        if (row.kind == kind && row.from == from && row.to == to && row.by == by
            && row.action == action)
            return true;
    return false;
}

}  // namespace sealtrain::core
