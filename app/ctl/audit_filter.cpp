// The entry filters of `audit export` (audit_filter.h).
#include "audit_filter.h"

#include "sealtrain/audit/tree_head.h"

#include <utility>

namespace sealtrain::ctl {

void addFilterOptions(CLI::App* command, FilterOptions& options)
{
    command->add_option("--from", options.from,
                        "Only entries at or after this UTC time "
                        "(2026-11-30T09:00:00Z)");
    command->add_option("--to", options.to, "Only entries before this UTC time");
    command->add_option("--actor", options.filter.actor, "Only entries by this actor id");
    command->add_option("--action", options.filter.action,
                        "Only this action, or a namespace such as 'job.*'");
    command->add_option("--target-kind", options.filter.targetKind, "Only targets of this kind");
    command->add_option("--target-id", options.filter.targetId, "Only this target id");
}

Result<audit::ExportFilter> resolveFilter(const FilterOptions& options)
{
    audit::ExportFilter filter = options.filter;
    for (const auto& [text, field] :
         {std::pair{&options.from, &filter.fromTimeNs}, std::pair{&options.to, &filter.toTimeNs}}) {
        if (text->empty())
            continue;
        auto seconds = audit::parseUtcSeconds(*text);
        if (!seconds)
            return seconds.error();
        *field = static_cast<std::uint64_t>(*seconds) * 1000000000U;
    }
    return filter;
}

}  // namespace sealtrain::ctl
