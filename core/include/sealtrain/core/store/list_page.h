// One page of a list that grows without bound (sessions, jobs; issue #29): newest first, from
// just before `before` (0: the newest), at most `limit` items. A reply's `nextBefore` is where
// the next page starts, 0 when there is no more; a page that holds fewer than `limit` items may
// still have one (a job list skips the jobs the caller may not see, and looks at a bounded number
// of rows per page). Each page is its own audited call.
#pragma once

#include "sealtrain/base/result.h"

#include <cstdint>
#include <string>
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

// One page of a list that stays small and keeps a fixed order (users, roles, datasets, workers,
// keys; issue #29): the items whose key comes after `after` ("" from the first), at most `limit`.
// An item's key is its place in the list written as text (each type's pageKey), so that keys
// ascend as the list does and a page goes on from the right place even when items were added or
// removed since the previous one. A reply's nextAfter is the page's last key when more follow,
// "" at the end; clients pass it back as it is.
struct KeyedPage {
    std::string after;
    std::uint32_t limit = kDefaultListPage;
};

template <typename Item>
struct KeyedPaged {
    std::vector<Item> items;
    std::string nextAfter;  // "": no more

    // The page read as the list of its items.
    [[nodiscard]] auto begin() const { return items.begin(); }
    [[nodiscard]] auto end() const { return items.end(); }
    [[nodiscard]] std::size_t size() const { return items.size(); }
    [[nodiscard]] bool empty() const { return items.empty(); }
    [[nodiscard]] const Item& operator[](std::size_t index) const { return items[index]; }
    [[nodiscard]] const Item& front() const { return items.front(); }
    [[nodiscard]] const Item& back() const { return items.back(); }
};

inline constexpr std::size_t kMaxPageKeyBytes = 512;

// InvalidArgument, in one sentence, for a page that asks for no items or more than
// kMaxListPage, or starts after a key longer than any key is.
[[nodiscard]] inline Result<void> checkKeyedPage(const KeyedPage& page)
{
    if (page.limit < 1 || page.limit > kMaxListPage || page.after.size() > kMaxPageKeyBytes)
        return Error(ErrorCode::InvalidArgument,
                     "A page holds 1 to 1000 items and starts from \"\" or the previous page's "
                     "next_after; ask again with those.");
    return success();
}

// The page of `all` (in list order, keys ascending) that `page` asks for.
template <typename Item, typename KeyOf>
[[nodiscard]] Result<KeyedPaged<Item>> pageAfter(std::vector<Item> all, const KeyedPage& page,
                                                 const KeyOf& keyOf)
{
    SEALTRAIN_TRY(checkKeyedPage(page));
    KeyedPaged<Item> paged;
    auto item = all.begin();
    if (!page.after.empty())
        while (item != all.end() && keyOf(*item) <= page.after)
            ++item;
    for (; item != all.end() && paged.items.size() < page.limit; ++item)
        paged.items.push_back(std::move(*item));
    if (item != all.end())
        paged.nextAfter = keyOf(paged.items.back());
    return paged;
}

// A number written so that text order is number order (20 digits, zero-padded), for keys.
[[nodiscard]] inline std::string orderedNumber(std::uint64_t number)
{
    std::string digits = std::to_string(number);
    return std::string(20 - digits.size(), '0') + digits;
}

}  // namespace sealtrain::core
