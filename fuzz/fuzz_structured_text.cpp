// libFuzzer target: parseStructuredText, the reader of every job spec a submitter sends (JSON,
// else YAML) and of the desktop's spec editor. Its promise is a bounded cost: whatever it accepts
// is at most the rules' depth and node count, and nothing it reads — YAML aliases, anchors, tags,
// deep nesting, a second document — runs away first. Any crash, sanitizer report, stack overflow
// or accepted value past the bounds is a bug. Seeds are job specs in both forms (make_fuzz_seeds).
#include "sealtrain/base/structured_text.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

// Depth and count of `value`'s nodes (every object, array and scalar), as the rules count them.
void measure(const nlohmann::json& value, std::size_t depth, std::size_t& deepest,
             std::size_t& nodes)
{
    ++nodes;
    deepest = std::max(deepest, depth);
    if (value.is_structured())
        for (const auto& item : value)
            measure(item, depth + 1, deepest, nodes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const sealtrain::StructuredTextRules rules;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto parsed = sealtrain::parseStructuredText(text, rules);
    if (!parsed)
        return 0;
    std::size_t deepest = 0;
    std::size_t nodes = 0;
    measure(*parsed, 1, deepest, nodes);
    if (deepest > rules.maxDepth + 1 || nodes > rules.maxNodes + 1)
        std::abort();
    return 0;
}
