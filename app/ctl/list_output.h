// sealtrainctl's `list` commands and how they print what they list: one JSON array for --json
// (for scripts), else a table of a header line and one line an item.
#pragma once

#include "commands.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {

// Prints `items` as a JSON array of toJson(item) when `json`, else `header` and then row(item)
// for each item (both already formatted, newline included).
template <typename Item, typename ToJson, typename ToRow>
void printList(std::ostream& out, bool json, const std::vector<Item>& items,
               const std::string& header, ToJson toJson, ToRow row)
{
    if (json) {
        nlohmann::json array = nlohmann::json::array();
        for (const Item& item : items)
            array.push_back(toJson(item));
        out << array.dump(2) << '\n';
        return;
    }
    out << header;
    for (const Item& item : items)
        out << row(item);
}

}  // namespace sealtrain::ctl
