// One page of a list that grows without bound (sessions, jobs; issue #29): newest first, from
// just before `before` (0: the newest), at most `limit` items. A reply's `nextBefore` is where
// the next page starts, 0 when there is no more; a page that holds fewer than `limit` items may
// still have one (a job list skips the jobs the caller may not see, and looks at a bounded number
// of rows per page). Each page is its own audited call.
#pragma once

#include "sealtrain/base/result.h"

#include <cstdint>
#include <vector>

namespace sealtrain::core {

inline constexpr std::uint32_t kDefaultListPage = 200;
inline constexpr std::uint32_t kMaxListPage = 1000;

struct ListPage {
    std::int64_t before = 0;  // a row id, exclusive; 0: start at the newest
    std::uint32_t limit = kDefaultListPage;
};

template <typename Item>
struct Paged {
    std::vector<Item> items;
    std::int64_t nextBefore = 0;  // 0: no more
};

// InvalidArgument, in one sentence, for a page that asks for no items or more than
// kMaxListPage, or starts before a negative row.
[[nodiscard]] inline Result<void> checkListPage(const ListPage& page)
{
    if (page.limit < 1 || page.limit > kMaxListPage || page.before < 0)
        return Error(ErrorCode::InvalidArgument,
                     "A page holds 1 to 1000 items and starts from 0 or the previous page's "
                     "next_before; ask again with those.");
    return success();
}

}  // namespace sealtrain::core
