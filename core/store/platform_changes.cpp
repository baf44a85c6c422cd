// The control plane's own changes, audited (store/platform_changes.h).
#include "sealtrain/core/store/platform_changes.h"

#include "store/audited_transaction.h"

#include <utility>

namespace sealtrain::core {

Result<void> PlatformChanges::record(const std::string& action, std::vector<audit::Detail> details,
                                     const std::function<Result<void>()>& alongside) const
{
    return gate_->performWithoutSession(
        {action, {}, {}, {"platform", "data-directory"}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            if (alongside)
                SEALTRAIN_TRY(alongside());
            draft.actor = {audit::ActorKind::System, "control-plane", "", "internal"};
            for (auto& detail : details)
                draft.details.push_back(std::move(detail));
            return success();
        });
}

}  // namespace sealtrain::core
